//go:build linux

package guestinit_test

// TestBootInQEMU boots the agent as /init of a real kernel under QEMU (TCG)
// and drives it over the virtio-serial port, as the controller will, with
// an initramfs of its own (the agent, its configuration and the few modules
// it needs), not internal/image's. The kernel and its modules are Debian's
// amd64 ones that make setup fetches into the kernel cache
// (QOSLAB_KERNEL_CACHE, else the default cache); without them or
// qemu-system-x86_64 the test is skipped, or with QOSLAB_REQUIRE_VM=1 (CI)
// fails.
//
// QOSLAB_TEST_WORKDIR keeps the initramfs, disk and console log there.
// QOSLAB_TEST_APPEND adds to the kernel command line (e.g. "quiet").

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cavaliergopher/cpio"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/guestchan"
	"github.com/qoslab/qoslab/internal/guestinit"
	"github.com/qoslab/qoslab/internal/image"
	"github.com/qoslab/qoslab/internal/testvm"
)

// The modules the agent needs, dependencies first (in 6.1 virtio depends on
// virtio_ring), relative to the kernel's module directory.
var qemuTestModules = []string{
	"kernel/drivers/virtio/virtio_ring.ko",
	"kernel/drivers/virtio/virtio.ko",
	"kernel/drivers/virtio/virtio_pci_modern_dev.ko",
	"kernel/drivers/virtio/virtio_pci_legacy_dev.ko",
	"kernel/drivers/virtio/virtio_pci.ko",
	"kernel/drivers/char/virtio_console.ko",
	"kernel/drivers/block/virtio_blk.ko",
	// The agent listens on vsock too (the host needs no vsock device:
	// listening works without one).
	"kernel/net/vmw_vsock/vsock.ko",
	"kernel/net/vmw_vsock/vmw_vsock_virtio_transport_common.ko",
	"kernel/net/vmw_vsock/vmw_vsock_virtio_transport.ko",
}

// debianKernel is the amd64 kernel image and its modules directory in the
// kernel cache.
func debianKernel(t *testing.T) (kernel, modDir string) {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		// make setup fetches this machine's arch's kernel, make test-deps the other's.
		t.Skip("boots the amd64 kernel, which make setup fetches on amd64 machines")
	}
	const fix = "run scripts/setup.sh, which fetches it"
	cache := testvm.KernelCache()
	if cache == "" {
		var err error
		if cache, err = image.DefaultKernelCacheDir(os.Getenv); err != nil {
			testvm.Missing(t, "no kernel cache: "+err.Error(), fix)
		}
	}
	ks, err := image.LocateKernel(image.DefaultRecipe(), image.LocateOptions{Arch: "amd64", KernelCacheDir: cache})
	if err != nil {
		testvm.Missing(t, "no Debian kernel: "+err.Error(), fix)
	}
	return ks.Image, ks.ModulesDir
}

func TestBootInQEMU(t *testing.T) {
	testvm.Slow(t, "boots a VM")
	qemu := testvm.LookPath(t, "qemu-system-x86_64", "run scripts/setup.sh")
	kernel, modDir := debianKernel(t)
	dir := os.Getenv("QOSLAB_TEST_WORKDIR") // kept for a look afterwards
	if dir == "" {
		dir = t.TempDir()
	}

	agentBin := filepath.Join(dir, "init")
	build := exec.Command("go", "build", "-o", agentBin, "../../guest/agent")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	initrd := filepath.Join(dir, "initrd.gz")
	writeTestInitramfs(t, initrd, agentBin, modDir, qemuTestModules)

	disk := filepath.Join(dir, "disk.img")
	require.NoError(t, os.WriteFile(disk, nil, 0o644))
	require.NoError(t, os.Truncate(disk, 64<<20))
	cmdline := "console=ttyS0 panic=-1"
	if extra := os.Getenv("QOSLAB_TEST_APPEND"); extra != "" {
		cmdline += " " + extra
	}
	sock := filepath.Join(dir, "agent.sock")
	consoleLog := filepath.Join(dir, "console.log")

	cmd := exec.Command(qemu, "-machine", "q35", "-accel", "tcg", "-m", "512", "-smp", "2",
		"-display", "none", "-monitor", "none", "-serial", "file:"+consoleLog, "-no-reboot",
		"-kernel", kernel, "-initrd", initrd, "-append", cmdline,
		"-device", "virtio-serial-pci",
		"-chardev", "socket,id=agent,path="+sock+",server=on,wait=off",
		"-device", "virtserialport,chardev=agent,name="+guestchan.PortName,
		"-drive", "file="+disk+",format=raw,if=none,id=d0", "-device", "virtio-blk-pci,drive=d0")
	var qemuOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &qemuOut, &qemuOut
	began := time.Now()
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	gone := make(chan struct{})
	var qemuErr error
	go func() {
		qemuErr = cmd.Wait()
		close(gone)
		exited <- qemuErr
	}()
	t.Cleanup(func() {
		select {
		case <-gone:
		default:
			_ = cmd.Process.Kill()
			<-gone
		}
		if t.Failed() {
			b, _ := os.ReadFile(consoleLog)
			t.Logf("qemu: %s\nconsole:\n%s", qemuOut.String(), b)
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	firstOutput, serving := watchConsole(ctx, consoleLog, began)
	connect := func() *agent.Client {
		var conn net.Conn
		for conn == nil {
			c, err := net.Dial("unix", sock)
			if err == nil {
				conn = c
				break
			}
			select {
			case err := <-exited:
				t.Fatalf("qemu ended before its socket was there: %v", err)
			case <-ctx.Done():
				t.Fatal("no agent socket")
			case <-time.After(20 * time.Millisecond):
			}
		}
		client, err := agent.NewClient(func(context.Context) (net.Conn, error) { return conn, nil })
		require.NoError(t, err)
		client.EndsWith(gone, func() error { return fmt.Errorf("qemu ended: %w", qemuErr) })
		return client
	}

	// A first connection that only probes, as a readiness check does.
	probe := connect()
	info, err := probe.Info(ctx)
	require.NoError(t, err)
	answered := time.Since(began)
	require.NoError(t, probe.Close())
	// virtio-serial has no connection boundaries: a client that reconnects
	// at once can have its first bytes read by the agent's old session
	// before the guest has seen the host side close. Give it time to.
	time.Sleep(2 * time.Second)

	client := connect()
	defer client.Close()
	reconnected := time.Now()
	_, err = client.Info(ctx)
	require.NoError(t, err, "the agent answers a second connection")
	t.Logf("second connection answered after %.2f s", time.Since(reconnected).Seconds())
	t.Logf("qemu start -> first console line %.2f s, -> agent serving line %.2f s, -> agent answered Info %.2f s",
		(<-firstOutput).Seconds(), (<-serving).Seconds(), answered.Seconds())
	assert.True(t, info.GetVirtualized(), "virtualization: %s", info.GetVirtualization())
	assert.Equal(t, "linux", info.GetOs())
	assert.NotEqual(t, int32(1), info.GetPid(), "the agent serves from its own process, not PID 1")
	t.Logf("guest: %s, %s, %d CPUs, %d MiB", info.GetOsVersion(), info.GetCpuModel(), info.GetLogicalCpus(), info.GetMemoryBytes()>>20)

	fp, err := client.Run(ctx, &agentpb.RunRequest{Workload: "fp", Qos: 21, Threads: 2, Loops: 2_000_000}, nil)
	require.NoError(t, err)
	require.Len(t, fp.GetRecords(), 2)
	for _, r := range fp.GetRecords() {
		assert.Positive(t, r.GetRate(), "fp record %d", r.GetIndex())
	}

	// Worker processes are the agent process's children: exec.Cmd.Wait must
	// get their statuses although init reaps orphans.
	procs, err := client.Run(ctx, &agentpb.RunRequest{Workload: "procs", Qos: 21, Threads: 3, Loops: 1_000_000}, nil)
	require.NoError(t, err, "procs in the guest")
	assert.Len(t, procs.GetRecords(), 3)

	blk, err := client.Run(ctx, &agentpb.RunRequest{Workload: "compress", Qos: 21, Threads: 1, SizeBytes: 4 << 20,
		Codec: "zstd", Sink: "block", SinkPath: "/dev/vda"}, nil)
	require.NoError(t, err, "compress to the scratch disk")
	assert.NotEmpty(t, blk.GetRecords())

	shutdownAt := time.Now()
	require.NoError(t, client.Shutdown(ctx))
	select {
	case err := <-exited:
		assert.NoError(t, err, "qemu exits by itself, cleanly")
		t.Logf("Shutdown -> qemu exited: %.2f s", time.Since(shutdownAt).Seconds())
	case <-time.After(60 * time.Second):
		t.Fatal("qemu still running 60 s after Shutdown")
	}

	console, err := os.ReadFile(consoleLog)
	require.NoError(t, err)
	var summary string
	sc := bufio.NewScanner(bytes.NewReader(console))
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, guestinit.LogPrefix) {
			t.Log("console: " + line)
		}
		if strings.Contains(line, guestinit.LogPrefix+"up in ") {
			summary = line
		}
	}
	assert.NotEmpty(t, summary, "the boot summary is on the console")
	assert.Contains(t, string(console), "reboot: Power down", "the guest powered off")
}

// watchConsole reports, on the host's clock since began, when the console
// log first has a line and when it has the agent's "serving on" line.
func watchConsole(ctx context.Context, path string, began time.Time) (firstOutput, serving <-chan time.Duration) {
	first, up := make(chan time.Duration, 1), make(chan time.Duration, 1)
	go func() {
		var sawFirst bool
		for ctx.Err() == nil {
			b, _ := os.ReadFile(path)
			if !sawFirst && len(b) > 0 {
				sawFirst = true
				first <- time.Since(began)
			}
			if bytes.Contains(b, []byte(" serving on ")) {
				up <- time.Since(began)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	return first, up
}

// writeTestInitramfs is a stand-in for internal/image: the agent as /init,
// the init configuration, and the modules.
func writeTestInitramfs(t *testing.T, path, agentBin, modDir string, mods []string) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	gz := gzip.NewWriter(f)
	w := cpio.NewWriter(gz)
	dirs := map[string]bool{}
	addDirs := func(name string) {
		var parts []string
		for _, p := range strings.Split(filepath.Dir(name), "/") {
			parts = append(parts, p)
			d := strings.Join(parts, "/")
			if d == "." || dirs[d] {
				continue
			}
			dirs[d] = true
			require.NoError(t, w.WriteHeader(&cpio.Header{Name: d, Mode: cpio.TypeDir | 0o755}))
		}
	}
	add := func(name string, mode cpio.FileMode, body []byte) {
		addDirs(name)
		require.NoError(t, w.WriteHeader(&cpio.Header{Name: name, Mode: cpio.TypeReg | mode, Size: int64(len(body))}))
		_, err := w.Write(body)
		require.NoError(t, err)
	}
	bin, err := os.ReadFile(agentBin)
	require.NoError(t, err)
	add("init", 0o755, bin)

	version := filepath.Base(modDir)
	cfg := guestinit.Config{
		Listen:        []string{guestinit.VirtioPortPrefix + guestchan.PortName, "vsock:1024"},
		ScratchDevice: "/dev/vda",
		ScratchDir:    "/scratch",
		KernelVersion: version,
	}
	for _, m := range mods {
		body, err := os.ReadFile(filepath.Join(modDir, m))
		require.NoError(t, err)
		inImage := filepath.Join("lib/modules", version, m)
		add(inImage, 0o644, body)
		cfg.Modules = append(cfg.Modules, "/"+inImage)
	}
	js, err := json.Marshal(cfg)
	require.NoError(t, err)
	add(strings.TrimPrefix(guestchan.ConfigPath, "/"), 0o644, js)
	require.NoError(t, w.Close())
	require.NoError(t, gz.Close())
}
