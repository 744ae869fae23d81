package qemu

import (
	"context"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/hv"
)

// Start refuses a bad spec before it runs anything, saying what is wrong
// and what is allowed.
func TestStartRejects(t *testing.T) {
	img := stubImage(t)
	good := hv.Spec{Name: "lab", Image: img, CPUs: 1, MemoryMiB: 256, StateDir: shortTempDir(t)}
	assertStartRefuses(t, good, []startRefusal{
		{"no state directory", Options{}, func(s *hv.Spec) { s.StateDir = "" }, "no state directory"},
		{"unknown architecture", Options{}, func(s *hv.Spec) { s.Image.Arch = "riscv64" }, `image "stub" is for "riscv64": want amd64 or arm64`},
		{"no vCPUs", Options{}, func(s *hv.Spec) { s.CPUs = 0 }, "0 vCPUs: want 1 to"},
		{"more vCPUs than the host", Options{}, func(s *hv.Spec) { s.CPUs = runtime.NumCPU() + 1 }, "want 1 to " + strconv.Itoa(runtime.NumCPU()) + " (this host's CPUs)"},
		{"too little memory", Options{}, func(s *hv.Spec) { s.MemoryMiB = 64 }, "64 MiB of memory: want at least 128 MiB"},
		{"negative disk", Options{}, func(s *hv.Spec) { s.DiskBytes = -1 }, "scratch disk of -1 bytes"},
		{"missing kernel", Options{}, func(s *hv.Spec) { s.Image.Kernel = filepath.Join(img.Dir, "vmlinuz-absent") }, "vmlinuz-absent: no such file or directory: rebuild the image"},
		{"no initramfs", Options{}, func(s *hv.Spec) { s.Image.Initramfs = "" }, `image "stub" has no initramfs`},
		{"socket path too long", Options{}, func(s *hv.Spec) { s.StateDir = "/tmp/" + strings.Repeat("x", 110) }, "unix sockets allow at most"},
		{"QEMU missing", Options{QEMUAMD64: "/nonexistent/qemu-system-x86_64"}, func(*hv.Spec) {}, "is not installed: " + installHint("amd64")},
	})
}

// startRefusal is a spec that Start must refuse: good changed by change,
// started with opts, and the words the error must contain.
type startRefusal struct {
	name   string
	opts   Options
	change func(*hv.Spec)
	want   string
}

// assertStartRefuses starts each refusal's spec and asserts Start refuses it
// with its words, before anything is started.
func assertStartRefuses(t *testing.T, good hv.Spec, tests []startRefusal) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := good
			tt.change(&spec)
			tt.opts.CacheDir = t.TempDir()
			m, err := New(tt.opts).Start(context.Background(), spec)
			require.Error(t, err)
			assert.Nil(t, m)
			assert.Contains(t, err.Error(), tt.want)
			assert.NoFileExists(t, filepath.Join(spec.StateDir, hv.StateFile), "nothing was started")
		})
	}
}

func TestCheckReportsMissingQEMU(t *testing.T) {
	b := New(Options{QEMUAMD64: "/nonexistent/qemu-system-x86_64", QEMUARM64: "/nonexistent/qemu-system-aarch64", CacheDir: t.TempDir()})
	checks := b.Check(context.Background())
	byName := map[string]hv.Check{}
	for _, c := range checks {
		byName[c.Name] = c
	}
	native, other := "/nonexistent/qemu-system-x86_64", "/nonexistent/qemu-system-aarch64"
	if runtime.GOARCH == "arm64" {
		native, other = other, native
	}
	require.Contains(t, byName, native)
	assert.False(t, byName[native].OK, "this host's emulator is required")
	assert.Contains(t, byName[native].Fix, "install")
	require.Contains(t, byName, other)
	assert.True(t, byName[other].OK, "the other architecture's emulator is optional")
	assert.Contains(t, byName[other].Detail, "not installed")
	require.Contains(t, byName, "qemu-img")
	if runtime.GOOS == "linux" {
		assert.Contains(t, byName, kvmDevice)
		assert.Contains(t, byName, vhostVsockDevice)
	}
}

func TestCheckFindsQEMU(t *testing.T) {
	requireQEMU(t)
	checks := New(Options{CacheDir: t.TempDir()}).Check(context.Background())
	var found bool
	for _, c := range checks {
		if c.Name == "qemu-system-x86_64" {
			found = true
			assert.True(t, c.OK)
			assert.Contains(t, c.Detail, "QEMU emulator version")
		}
	}
	assert.True(t, found)
}
