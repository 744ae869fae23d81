package guestinit

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestBootTimesSummary(t *testing.T) {
	cases := []struct {
		name  string
		times bootTimes
		want  string
	}{
		{
			name: "every stage",
			times: bootTimes{InitStart: ms(800), Ready: ms(2030), Steps: []bootStep{
				{Name: "go start", Took: ms(350)},
				{Name: "mounts", Took: ms(12)},
				{Name: "modules", Took: ms(904), Parts: []bootStep{
					{Name: "virtio_ring", Took: ms(4)},
					{Name: "virtio_pci", Took: ms(300)},
					{Name: "virtio", Took: ms(2)},
					{Name: "virtio_blk", Took: ms(56)},
				}},
				{Name: "channels", Took: ms(100), Parts: []bootStep{{Name: "virtio-port:org.qoslab.agent", Took: ms(100)}}},
			}},
			want: "up in 1.23 s, 2.03 s after kernel start (go start 0.35 s, mounts 0.01 s, " +
				"modules 0.90 s [virtio_pci 0.30 s, virtio_blk 0.06 s, 2 more under 0.01 s], " +
				"channels 0.10 s [virtio-port:org.qoslab.agent 0.10 s])",
		},
		{
			name: "only short parts",
			times: bootTimes{InitStart: ms(1000), Ready: ms(1500), Steps: []bootStep{
				{Name: "modules", Took: ms(9), Parts: []bootStep{{Name: "a", Took: ms(1)}, {Name: "b", Took: ms(2)}}},
			}},
			want: "up in 0.50 s, 1.50 s after kernel start (modules 0.01 s [2 under 0.01 s])",
		},
		{
			name: "a lone short part is named",
			times: bootTimes{InitStart: ms(1000), Ready: ms(1500), Steps: []bootStep{
				{Name: "channels", Took: ms(4), Parts: []bootStep{{Name: "vsock:1024", Took: ms(4)}}},
			}},
			want: "up in 0.50 s, 1.50 s after kernel start (channels 0.00 s [vsock:1024 0.00 s])",
		},
		{
			name:  "no steps",
			times: bootTimes{InitStart: ms(1000), Ready: ms(1250)},
			want:  "up in 0.25 s, 1.25 s after kernel start",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.times.Summary())
		})
	}
}

func TestBootTimesCrossTheExec(t *testing.T) {
	sent := bootTimes{InitStart: ms(5204), Spawned: ms(6100), Steps: []bootStep{
		{Name: "modules", Took: ms(280), Parts: []bootStep{{Name: "virtio", Took: ms(30)}}},
	}}
	got, err := decodeBootTimes(sent.encode())
	require.NoError(t, err)
	assert.Equal(t, sent, got)

	_, err = decodeBootTimes("--listen")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"--listen"`)
}

func TestStopwatchRecordsEachStep(t *testing.T) {
	var sw stopwatch
	fail := errors.New("mount failed")
	require.NoError(t, sw.time("modules", func() ([]bootStep, error) {
		time.Sleep(ms(2))
		return []bootStep{{Name: "virtio", Took: ms(1)}}, nil
	}))
	assert.ErrorIs(t, sw.time("mounts", func() ([]bootStep, error) { return nil, fail }), fail)

	require.Len(t, sw.steps, 2)
	assert.Equal(t, "modules", sw.steps[0].Name)
	assert.GreaterOrEqual(t, sw.steps[0].Took, ms(2))
	assert.Equal(t, []bootStep{{Name: "virtio", Took: ms(1)}}, sw.steps[0].Parts)
	assert.Equal(t, "mounts", sw.steps[1].Name, "a failed step is still timed")
}
