package qemu

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/guestchan"
	"github.com/qoslab/qoslab/internal/hv"
)

func vzLaunch() launch {
	l := baseLaunch()
	l.Arch, l.Machine, l.Accel, l.Model = "arm64", machineVirt, AccelTCG, hv.ModelVZ
	l.Kernel, l.Cmdline = "/img/Image", "quiet panic=-1 console=ttyAMA0"
	l.AgentSocket, l.VhostUserSocket = "", "/s/vhost-vsock.sock"
	return l
}

// The vz model is Virtualization.framework's Linux guest on QEMU's virt
// machine: the virtio console its only console, no UART named, no
// virtio-serial agent port, vsock through the vhost-user daemon, the
// entropy device, and vz's own command line.
func TestVZModelCommandLine(t *testing.T) {
	args, err := commandLine(vzLaunch())
	require.NoError(t, err)
	all := strings.Join(args, " ")
	assert.Equal(t, []string{"virt,gic-version=max,memory-backend=vzmem"}, argValues(args, "-machine"))
	assert.Equal(t, []string{"memory-backend-memfd,id=vzmem,size=2048M,share=on"}, argValues(args, "-object"), "vhost-user shares the guest's memory")
	assert.Equal(t, []string{"2048M"}, argValues(args, "-m"))
	assert.Equal(t, []string{"tcg,thread=multi"}, argValues(args, "-accel"))
	assert.Equal(t, []string{
		"file,id=console,path=/s/console.log",
		"socket,id=qmp,path=/s/qmp.sock,server=on,wait=off",
		"socket,id=vsock,path=/s/vhost-vsock.sock",
	}, argValues(args, "-chardev"))
	assert.Equal(t, []string{
		"virtio-serial-pci,id=vzconsole", "virtconsole,bus=vzconsole.0,chardev=console",
		"vhost-user-vsock-pci,chardev=vsock", "virtio-rng-pci",
	}, argValues(args, "-device"))
	assert.Equal(t, []string{"/img/Image"}, argValues(args, "-kernel"), "the uncompressed Image, as vz's Linux boot loader takes")
	assert.Equal(t, []string{guestchan.VZLinuxCmdline("quiet panic=-1 console=ttyAMA0")}, argValues(args, "-append"), "the vz backend's command line, exactly")
	assert.Equal(t, []string{"quiet panic=-1 console=hvc0 qoslab.listen=vsock:1024"}, argValues(args, "-append"))
	assert.Empty(t, argValues(args, "-serial"), "no UART console")
	for _, absent := range []string{"ttyAMA0", "virtserialport", guestchan.PortName, "agent.sock", "vhost-vsock-pci", "-drive"} {
		assert.NotContains(t, all, absent)
	}
	for _, flag := range []string{"-nodefaults", "-no-user-config", "-no-reboot"} {
		assert.Contains(t, args, flag)
	}

	l := vzLaunch()
	l.Disk, l.DiskCache = "/s/scratch.raw", "none"
	args, err = commandLine(l)
	require.NoError(t, err)
	assert.Equal(t, []string{"file=/s/scratch.raw,format=raw,if=none,id=scratch,cache=none"}, argValues(args, "-drive"), "a block device when the plan has one")
	assert.Contains(t, argValues(args, "-device"), "virtio-blk-pci,drive=scratch,serial=qoslab-scratch")

	l = vzLaunch()
	l.Accel = accelHVF
	args, err = commandLine(l)
	require.NoError(t, err)
	assert.Equal(t, []string{"virt,memory-backend=vzmem"}, argValues(args, "-machine"))
}

func TestVZModelCommandLineRejects(t *testing.T) {
	tests := []struct {
		name   string
		change func(*launch)
		want   string
	}{
		{"amd64", func(l *launch) { l.Arch, l.Machine = "amd64", machineQ35 }, "the vz model for a amd64 image: want arm64"},
		{"no daemon socket", func(l *launch) { l.VhostUserSocket = "" }, "without its vsock daemon's socket"},
		{"kernel vsock too", func(l *launch) { l.VsockCID = 42 }, "not the kernel's vhost-vsock"},
		{"unknown model", func(l *launch) { l.Model = "hyperv" }, `device model "hyperv": want default or vz`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := vzLaunch()
			tt.change(&l)
			_, err := commandLine(l)
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

// arm64Stub writes a raw arm64 kernel that spins (b .), which QEMU's virt
// loader starts as it is, and a dummy initramfs.
func arm64Stub(t testing.TB) hv.Image {
	dir := t.TempDir()
	img := hv.Image{Name: "stub-arm64", Dir: dir, Arch: "arm64", Kernel: filepath.Join(dir, "vmlinuz"),
		UncompressedKernel: filepath.Join(dir, "Image"), Initramfs: filepath.Join(dir, "initrd"), Cmdline: "quiet console=ttyAMA0"}
	spin := []byte{0x00, 0x00, 0x00, 0x14} // b . (little endian)
	require.NoError(t, os.WriteFile(img.Kernel, spin, 0o644))
	require.NoError(t, os.WriteFile(img.UncompressedKernel, spin, 0o644))
	require.NoError(t, os.WriteFile(img.Initramfs, []byte("not an initramfs"), 0o644))
	return img
}

// Start refuses what the vz model cannot boot, before anything runs.
func TestVZModelStartRejects(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the vz model runs on Linux hosts")
	}
	img := arm64Stub(t)
	good := hv.Spec{Name: "lab", Image: img, CPUs: 1, MemoryMiB: 256, Model: hv.ModelVZ, StateDir: shortTempDir(t)}
	assertStartRefuses(t, good, []startRefusal{
		{"an unknown model", Options{}, func(s *hv.Spec) { s.Model = "hyperv" }, `device model "hyperv": allowed default, vz`},
		{"an amd64 image", Options{}, func(s *hv.Spec) { s.Image = stubImage(t) }, `the vz device model boots arm64 images, as Virtualization.framework on Apple silicon does; image "stub" is for amd64: build one with ` + "`qoslab image build linux --arch arm64`"},
		{"detached", Options{}, func(s *hv.Spec) { s.Detach = true }, "a named VM (vm start) boots the default model"},
		{"no uncompressed kernel", Options{}, func(s *hv.Spec) { s.Image.UncompressedKernel = "" }, `image "stub-arm64" has no uncompressed kernel`},
		{"the uncompressed kernel gone", Options{}, func(s *hv.Spec) { s.Image.UncompressedKernel = filepath.Join(img.Dir, "gone") }, "uncompressed kernel: stat"},
		{"no daemon", Options{VhostVsock: "/nonexistent/vhost-device-vsock"}, func(*hv.Spec) {},
			"rust-vmm's vhost-user vsock device that the vz model's vsock needs, is not installed: cargo install --locked vhost-device-vsock@0.3.0"},
	})
}

func TestParseVhostVsockVersion(t *testing.T) {
	v, err := parseVhostVsockVersion("vhost-device-vsock 0.3.0\n")
	require.NoError(t, err)
	assert.Equal(t, "0.3.0", v)
	_, err = parseVhostVsockVersion("error: unexpected argument '--version'\n")
	assert.ErrorContains(t, err, `--version said "error: unexpected argument '--version'", not vhost-device-vsock VERSION`)
	assert.Empty(t, versionNote("0.3.0"))
	assert.Equal(t, "vhost-device-vsock 0.4.1: qoslab is tested with 0.3.0 (cargo install --locked vhost-device-vsock@0.3.0)", versionNote("0.4.1"))
}

// The daemon is found in the directories given (cargo's bin directory)
// when PATH lacks it, as after `cargo install` in a shell whose PATH was
// set before; the process's CARGO_HOME is not read.
func TestFindVhostVsockInCargoHome(t *testing.T) {
	home := t.TempDir()
	bin := filepath.Join(home, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	fake := filepath.Join(bin, VhostVsockName)
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\necho vhost-device-vsock 0.3.0\n"), 0o755))
	t.Setenv("CARGO_HOME", home)
	t.Setenv("PATH", t.TempDir())
	_, _, err := New(Options{}).FindVhostVsock(context.Background())
	assert.ErrorContains(t, err, "is not installed: "+vhostVsockInstall, "the environment is the configuration's to read")
	path, version, err := New(Options{VhostVsockDirs: []string{t.TempDir(), bin}}).FindVhostVsock(context.Background())
	require.NoError(t, err)
	assert.Equal(t, fake, path)
	assert.Equal(t, "0.3.0", version)

	_, _, err = New(Options{VhostVsockDirs: []string{t.TempDir()}}).FindVhostVsock(context.Background())
	assert.ErrorContains(t, err, "is not installed: "+vhostVsockInstall)
}

// doctor lists the vz model's daemon: optional, with the command that
// installs it when it is missing or another version.
func TestCheckVhostVsock(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the vz model runs on Linux hosts")
	}
	find := func(checks []hv.Check) hv.Check {
		for _, c := range checks {
			if c.Name == VhostVsockName {
				return c
			}
		}
		require.FailNow(t, "no check of "+VhostVsockName)
		return hv.Check{}
	}
	c := find(New(Options{CacheDir: t.TempDir(), VhostVsock: "/nonexistent/vhost-device-vsock"}).Check(context.Background()))
	assert.True(t, c.OK, "needed only for --vm-model vz")
	assert.Contains(t, c.Detail, "is not installed")
	assert.Contains(t, c.Detail, "needed only for --vm-model vz")
	assert.Equal(t, vhostVsockInstall, c.Fix)

	dir := t.TempDir()
	old := filepath.Join(dir, VhostVsockName)
	require.NoError(t, os.WriteFile(old, []byte("#!/bin/sh\necho vhost-device-vsock 0.2.0\n"), 0o755))
	c = find(New(Options{CacheDir: t.TempDir(), VhostVsock: old}).Check(context.Background()))
	assert.True(t, c.OK)
	assert.Contains(t, c.Detail, old+": vhost-device-vsock 0.2.0, for --vm-model vz")
	assert.Contains(t, c.Detail, "qoslab is tested with 0.3.0")
	assert.Equal(t, vhostVsockInstall, c.Fix)
}

// The vz model dials vsock only once the agent has said on the console
// that it serves; a VM that ends, or a caller that gives up, ends the wait.
func TestAwaitServing(t *testing.T) {
	console := filepath.Join(t.TempDir(), "console.log")
	require.NoError(t, os.WriteFile(console, []byte("qoslab-agent: up in 1.00 s\n"), 0o644))
	m := &machine{consoleLog: console}
	waited := make(chan error, 1)
	go func() { waited <- m.awaitServing(context.Background()) }()
	f, err := os.OpenFile(console, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("qoslab-agent: devel" + guestchan.ServingMark + "vm(4294967295):1024\r\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	select {
	case err := <-waited:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the serving line was not noticed")
	}
	require.NoError(t, os.Remove(console))
	assert.NoError(t, m.awaitServing(context.Background()), "noticed once, not looked for again")

	quiet := &machine{consoleLog: filepath.Join(t.TempDir(), "console.log"), consoleKept: "/r/run-1/vm-console.log"}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = quiet.awaitServing(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "waiting for the agent to say on the console (/r/run-1/vm-console.log)",
		"the console where it is kept once the VM stops (hv.Spec.KeepConsole), not the state directory's")

	quiet.Finish(nil)
	assert.ErrorContains(t, quiet.awaitServing(context.Background()), "the VM has ended")
}
