package guestinit

import (
	"errors"
	"github.com/qoslab/qoslab/internal/guestchan"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestModuleName(t *testing.T) {
	cases := map[string]string{
		"/lib/modules/6.1.0/kernel/drivers/virtio/virtio_pci.ko":    "virtio_pci",
		"/lib/modules/6.1.0/kernel/drivers/gpu/virtio-gpu.ko":       "virtio_gpu",
		"/lib/modules/6.1.0/kernel/net/vsock.ko.xz":                 "vsock",
		"/lib/modules/6.1.0/kernel/drivers/block/virtio_blk.ko.zst": "virtio_blk",
	}
	for path, want := range cases {
		assert.Equal(t, want, moduleName(path), path)
	}
}

func TestCompressedModule(t *testing.T) {
	assert.True(t, compressedModule("/m/vsock.ko.xz"))
	assert.True(t, compressedModule("/m/vsock.ko.zst"))
	assert.False(t, compressedModule("/m/vsock.ko"))
}

func TestModuleLoadErrorAcceptsLoadedModules(t *testing.T) {
	assert.NoError(t, moduleLoadError("/m/virtio.ko", nil, nil))
	assert.NoError(t, moduleLoadError("/m/virtio.ko", syscall.EEXIST, nil), "loaded before, or built in")
}

func TestModuleLoadError(t *testing.T) {
	const path = "/lib/modules/6.1.0-56-amd64/kernel/drivers/virtio/virtio_pci.ko"
	cases := []struct {
		name      string
		errno     syscall.Errno
		kernelLog []string
		missing   []string
		mention   []string
	}{
		{
			name:  "unknown symbols",
			errno: syscall.ENOENT,
			kernelLog: []string{
				"virtio_blk: 1/0/0 default/read/poll queues",
				"virtio_pci: Unknown symbol vp_modern_probe (err -2)",
				"virtio_pci: Unknown symbol vp_legacy_probe (err -2)",
			},
			missing: []string{"vp_modern_probe", "vp_legacy_probe"},
			mention: []string{"depends on is not loaded", "vp_modern_probe, vp_legacy_probe", "modules.dep", guestchan.ConfigPath},
		},
		{
			name:    "ENOENT without a kernel log",
			errno:   syscall.ENOENT,
			mention: []string{"depends on is not loaded", "modules.dep"},
		},
		{
			name:      "another kernel's module",
			errno:     syscall.EINVAL,
			kernelLog: []string{"virtio_pci: disagrees about version of symbol module_layout"},
			mention:   []string{"EINVAL", "another kernel version", "kernel: disagrees about version of symbol module_layout"},
		},
		{name: "not a module", errno: syscall.ENOEXEC, mention: []string{"ENOEXEC", "architecture"}},
		{name: "not permitted", errno: syscall.EPERM, mention: []string{"EPERM", "modules_disabled"}},
		{name: "anything else", errno: syscall.ENOMEM, mention: []string{syscall.ENOMEM.Error()}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := moduleLoadError(path, tc.errno, tc.kernelLog)
			require.Error(t, err)
			var me *moduleError
			require.ErrorAs(t, err, &me)
			assert.ErrorIs(t, err, tc.errno)
			assert.Equal(t, "virtio_pci", me.Module)
			assert.Equal(t, tc.missing, me.MissingSymbols)
			msg := err.Error()
			assert.Contains(t, msg, "load module virtio_pci from "+path, "names the module and its file")
			for _, m := range tc.mention {
				assert.Contains(t, msg, m)
			}
			assert.NotContains(t, msg, "virtio_blk", "other modules' lines are not this module's")
		})
	}
}

func TestModuleErrorUnwraps(t *testing.T) {
	err := moduleLoadError("/m/virtio.ko", syscall.ENOEXEC, nil)
	assert.True(t, errors.Is(err, syscall.ENOEXEC))
}

func TestKmsgRecord(t *testing.T) {
	cases := []struct {
		record string
		at     time.Duration
		msg    string
		ok     bool
	}{
		{"4,1234,5204498,-;virtio_pci: Unknown symbol x (err -2)\n", 5204498 * time.Microsecond, "virtio_pci: Unknown symbol x (err -2)", true},
		{"6,345,1000,-;Run /init as init process\n SUBSYSTEM=x\n DEVICE=y\n", time.Millisecond, "Run /init as init process", true},
		{"6,345,1000,c,more;text\n", time.Millisecond, "text", true},
		{"no header", 0, "", false},
		{"6,345;short header", 0, "", false},
		{"6,345,soon,-;bad time", 0, "", false},
	}
	for _, tc := range cases {
		at, msg, ok := kmsgRecord(tc.record)
		assert.Equal(t, tc.ok, ok, "%q", tc.record)
		assert.Equal(t, tc.at, at, "%q", tc.record)
		assert.Equal(t, tc.msg, msg, "%q", tc.record)
	}
}

func TestInitRunMessage(t *testing.T) {
	assert.True(t, initRunMessage("Run /init as init process"))
	assert.True(t, initRunMessage("Run /sbin/init as init process"))
	assert.False(t, initRunMessage("Run /init as init process with arguments:"))
	assert.False(t, initRunMessage("Freeing unused kernel image (initmem) memory: 2824K"))
}
