package units

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCounts(t *testing.T) {
	good := []struct {
		in   string
		want []int
	}{
		{"4", []int{4}},
		{"1-4", []int{1, 2, 3, 4}},
		{"1,2,4", []int{1, 2, 4}},
		{"1-2, 8", []int{1, 2, 8}},
		{"2,1-3", []int{2, 1, 3}},
		{"10-40/10", []int{10, 20, 30, 40}},
	}
	for _, c := range good {
		got, err := ParseCounts("threads", c.in, 64)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
	bad := []struct{ in, msg string }{
		{"4-1", "runs backwards"},
		{"0", "outside 1..64"},
		{"-3", "not a whole number"},
		{"1-100", "outside 1..64"},
		{"two", "not a whole number"},
		{"", "empty threads list"},
		{"1/2", "bad step"},
		{"1-x", "not a range"},
	}
	for _, c := range bad {
		_, err := ParseCounts("threads", c.in, 64)
		assert.ErrorContains(t, err, c.msg, c.in)
	}
}

func TestParseCount(t *testing.T) {
	good := map[string]uint64{"2e8": 200000000, "200000000": 2e8, "1.5e3": 1500, "200_000": 200000, "1": 1}
	for in, want := range good {
		got, err := ParseCount("loops", in, 1<<50)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	bad := map[string]string{
		"1e99":                    "allowed 1..",
		"99999999999999999999999": "overflows",
		"0":                       "allowed 1..",
		"-5":                      "allowed 1..",
		"1.5":                     "not a whole number",
		"lots":                    "not a count",
		"NaN":                     "not a count",
	}
	for in, msg := range bad {
		_, err := ParseCount("loops", in, 1<<50)
		assert.ErrorContains(t, err, msg, in)
		if err != nil {
			assert.Contains(t, err.Error(), in, "the error names the bad value")
		}
	}
}

func TestParseSize(t *testing.T) {
	good := map[string]int64{"1GiB": 1 << 30, "256MiB": 256 << 20, "1e9": 1e9, "1.5GB": 1.5e9, "4096": 4096, "64k": 64 << 10}
	for in, want := range good {
		got, err := ParseSize("size", in, 1<<40)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"0", "huge", "2TiB", "-1MiB"} {
		_, err := ParseSize("size", in, 1<<40)
		assert.Error(t, err, in)
	}
	assert.Equal(t, "1GiB", FormatBytes(1<<30))
	assert.Equal(t, "1000B", FormatBytes(1000))
	assert.Equal(t, "2TiB", FormatBytes(2<<40))
}

func TestScaleRate(t *testing.T) {
	for _, c := range []struct {
		unit    string
		largest float64
		label   string
		scale   float64
	}{
		{"loops", 3.4e8, "M loops/s", 1e6},
		{"loops", 999, "loops/s", 1},
		{"loops", 2.5e9, "G loops/s", 1e9},
		{"bytes", 1.4e8, "MB/s", 1e6},
		{"bytes", 12, "B/s", 1},
		{"loops", -4e3, "k loops/s", 1e3}, // a negative regression slope still scales by size
		{"", 5e6, "M per s", 1e6},
	} {
		label, scale := ScaleRate(c.unit, c.largest)
		assert.Equal(t, c.label, label, "%s %g", c.unit, c.largest)
		assert.Equal(t, c.scale, scale, "%s %g", c.unit, c.largest)
	}
}

func TestPlural(t *testing.T) {
	assert.Equal(t, "1 spinner thread", Plural(1, "spinner thread"))
	assert.Equal(t, "2 spinner threads", Plural(2, "spinner thread"))
	assert.Equal(t, "0 spinner threads", Plural(0, "spinner thread"))
}

func TestSI(t *testing.T) {
	assert.Equal(t, "2k", SI(2000))
	assert.Equal(t, "526M", SI(5.26e8))
	assert.Equal(t, "1.236G", SI(1.2356e9))
	assert.Equal(t, "12.5", SI(12.5))
	assert.Equal(t, "-", SI(math.NaN()))
	label, scale := RateUnit("bytes")
	assert.Equal(t, "MB/s", label)
	assert.Equal(t, 1e6, scale)
	label, scale = RateUnit("loops")
	assert.Equal(t, "loops/s", label)
	assert.Equal(t, 1.0, scale)
}

func TestFormatCount(t *testing.T) {
	for n, want := range map[uint64]string{1: "1", 999: "999", 1000: "1e3", 2e8: "2e8", 1e8: "1e8", 2e5: "2e5", 1500: "1500", 12e6: "12000000"} {
		assert.Equal(t, want, FormatCount(n), "%d", n)
		back, err := ParseCount("n", want, 1<<60)
		require.NoError(t, err)
		assert.Equal(t, n, back, "reads back")
	}
}
