package guestinit

import (
	"github.com/qoslab/qoslab/internal/guestchan"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "init.json")
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	return path
}

func TestReadConfig(t *testing.T) {
	path := writeConfig(t, `{"modules": ["/lib/modules/6.1/kernel/drivers/virtio/virtio_ring.ko"],
		"listen": ["virtio-port:org.qoslab.agent", "vsock:1024"], "scratch_device": "/dev/vda", "kernel_version": "6.1"}`)
	c, err := ReadConfig(path)
	require.NoError(t, err)
	assert.Equal(t, []string{"/lib/modules/6.1/kernel/drivers/virtio/virtio_ring.ko"}, c.Modules)
	assert.Equal(t, "/scratch", c.ScratchDir, "the default scratch directory")
	assert.Equal(t, "/dev/vda", c.ScratchDevice)

	chans, err := c.Channels()
	require.NoError(t, err)
	require.Len(t, chans, 2)
	assert.Equal(t, guestchan.PortName, chans[0].PortName)
	assert.Equal(t, uint32(guestchan.VsockPort), chans[1].Addr.Port)
}

func TestReadConfigRefuses(t *testing.T) {
	cases := []struct {
		name, body string
		mention    []string
	}{
		{"not JSON", `{"listen": [`, []string{"unexpected end of JSON"}},
		{"no listen addresses", `{"modules": []}`, []string{"no listen addresses", "virtio-port:NAME"}},
		{"a bad listen address", `{"listen": ["virtio-port:org.qoslab.agent", "vsock:port"]}`, []string{`"vsock:port"`}},
		{"a relative scratch directory", `{"listen": ["vsock:1024"], "scratch_dir": "scratch"}`, []string{`scratch_dir "scratch"`, "absolute"}},
		{"a relative scratch device", `{"listen": ["vsock:1024"], "scratch_device": "vda"}`, []string{`scratch_device "vda"`, "/dev/vda"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, tc.body)
			_, err := ReadConfig(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), path, "names the file")
			for _, m := range tc.mention {
				assert.Contains(t, err.Error(), m)
			}
		})
	}
}

func TestReadConfigMissingFile(t *testing.T) {
	_, err := ReadConfig(filepath.Join(t.TempDir(), "absent.json"))
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), "absent.json")
}
