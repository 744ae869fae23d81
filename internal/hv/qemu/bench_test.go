package qemu

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/cavaliergopher/cpio"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/hv"
)

// BenchmarkStartToQMP measures from starting QEMU to QMP answering with
// the vCPU threads (what Start does before waiting for the agent), with
// the stub kernel under TCG: the backend's own overhead on every boot.
//
//	go test ./internal/hv/qemu -run '^$' -bench StartToQMP -benchtime 10x
func BenchmarkStartToQMP(b *testing.B) {
	requireQEMU(b)
	img := stubImage(b, printMarker, haltForever)
	backend := New(Options{CacheDir: b.TempDir()})
	var qmpReady time.Duration
	for b.Loop() {
		spec := hv.Spec{
			Name: "bench", Image: img, CPUs: 1, MemoryMiB: 128, Accel: AccelTCG, StateDir: shortTempDir(b),
			Ready: func(context.Context, hv.Machine) error { return nil },
		}
		m, err := backend.Start(context.Background(), spec)
		require.NoError(b, err)
		qmpReady += time.Duration(m.Info().BootNs)
		b.StopTimer()
		require.NoError(b, m.Stop(context.Background()))
		b.StartTimer()
	}
	b.ReportMetric(float64(qmpReady.Milliseconds())/float64(b.N), "ms-to-QMP/op")
}

// bootInit is a guest /init that says it is up and then idles. The
// initramfs has no device nodes (the cpio writer cannot make them), so it
// mounts devtmpfs to reach the console.
const bootInit = `package main

import (
	"os"
	"syscall"
	"time"
)

func main() {
	_ = os.Mkdir("/dev", 0o755)
	_ = syscall.Mount("devtmpfs", "/dev", "devtmpfs", 0, "")
	if f, err := os.OpenFile("/dev/console", os.O_WRONLY, 0); err == nil {
		f.WriteString("\nQOSLAB-BENCH-INIT\n")
	}
	for {
		time.Sleep(time.Hour)
	}
}
`

// BenchmarkKernelBoot measures from starting QEMU to a Linux kernel's /init
// writing to the console, for the kernel in QOSLAB_TEST_KERNEL (an amd64
// vmlinuz, e.g. Debian's), with a tiny Go /init. It shows what a boot
// costs before the agent starts, under TCG (and KVM when
// QOSLAB_BENCH_ACCEL=kvm).
//
//	QOSLAB_TEST_KERNEL=/tmp/kpkg/x/boot/vmlinuz-6.1.0-56-amd64 \
//	  go test ./internal/hv/qemu -run '^$' -bench KernelBoot -benchtime 3x
func BenchmarkKernelBoot(b *testing.B) {
	requireQEMU(b)
	kernel := os.Getenv("QOSLAB_TEST_KERNEL")
	if kernel == "" {
		b.Skip("set QOSLAB_TEST_KERNEL to an amd64 Linux kernel to measure boots")
	}
	accel := os.Getenv("QOSLAB_BENCH_ACCEL")
	if accel == "" {
		accel = AccelTCG
	}
	img := hv.Image{Name: "bench", Arch: "amd64", Kernel: kernel, Initramfs: buildBenchInitramfs(b), Cmdline: "quiet"}
	backend := New(Options{CacheDir: b.TempDir()})
	var boot time.Duration
	for b.Loop() {
		spec := hv.Spec{
			Name: "bench", Image: img, CPUs: min(2, runtime.NumCPU()), MemoryMiB: 512, Accel: accel,
			StateDir: shortTempDir(b), Ready: consoleShows("QOSLAB-BENCH-INIT"),
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		m, err := backend.Start(ctx, spec)
		cancel()
		require.NoError(b, err)
		boot += time.Duration(m.Info().BootNs)
		b.StopTimer()
		require.NoError(b, m.Stop(context.Background()))
		b.StartTimer()
	}
	b.ReportMetric(float64(boot.Milliseconds())/float64(b.N), "ms-to-init/op")
}

// buildBenchInitramfs compiles bootInit for linux/amd64 and packs it as a
// gzipped newc cpio.
func buildBenchInitramfs(b *testing.B) string {
	dir := b.TempDir()
	require.NoError(b, os.WriteFile(filepath.Join(dir, "main.go"), []byte(bootInit), 0o644))
	require.NoError(b, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module benchinit\n\ngo 1.24\n"), 0o644))
	build := exec.Command("go", "build", "-o", "init", ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	out, err := build.CombinedOutput()
	require.NoError(b, err, "build the bench init: %s", out)
	initBin, err := os.ReadFile(filepath.Join(dir, "init"))
	require.NoError(b, err)

	var archive bytes.Buffer
	gz := gzip.NewWriter(&archive)
	w := cpio.NewWriter(gz)
	for _, d := range []string{"dev", "proc"} {
		require.NoError(b, w.WriteHeader(&cpio.Header{Name: d, Mode: cpio.TypeDir | 0o755}))
	}
	require.NoError(b, w.WriteHeader(&cpio.Header{Name: "init", Mode: cpio.TypeReg | 0o755, Size: int64(len(initBin))}))
	_, err = w.Write(initBin)
	require.NoError(b, err)
	require.NoError(b, w.Close())
	require.NoError(b, gz.Close())
	path := filepath.Join(dir, "initramfs.cpio.gz")
	require.NoError(b, os.WriteFile(path, archive.Bytes(), 0o644))
	return path
}
