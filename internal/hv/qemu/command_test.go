package qemu

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/guestchan"
)

func baseLaunch() launch {
	return launch{
		Arch: "amd64", Accel: accelKVM, Machine: machineQ35,
		CPUs: 4, MemoryMiB: 2048, Name: "lab",
		Kernel: "/img/vmlinuz", Initramfs: "/img/initrd", Cmdline: "quiet",
		ConsoleLog: "/s/console.log", QMPSocket: "/s/qmp.sock", AgentSocket: "/s/agent.sock", PIDFile: "/s/qemu.pid",
	}
}

// argValue returns the values given to flag, in order.
func argValues(args []string, flag string) []string {
	var vals []string
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			vals = append(vals, args[i+1])
		}
	}
	return vals
}

func TestCommandLine(t *testing.T) {
	tests := []struct {
		name   string
		change func(*launch)
		// want maps a flag to its values, in order.
		want map[string][]string
		// absent are substrings no argument may contain.
		absent []string
	}{
		{
			name:   "amd64 with KVM",
			change: func(*launch) {},
			want: map[string][]string{
				"-machine": {"q35"},
				"-accel":   {"kvm"},
				"-cpu":     {"host"},
				"-smp":     {"4"},
				"-m":       {"2048M"},
				"-kernel":  {"/img/vmlinuz"},
				"-initrd":  {"/img/initrd"},
				"-append":  {"quiet console=ttyS0 panic=-1"},
				"-pidfile": {"/s/qemu.pid"},
				"-serial":  {"chardev:console"},
				"-mon":     {"chardev=qmp,mode=control"},
				"-name":    {"lab,debug-threads=on"},
				"-chardev": {
					"file,id=console,path=/s/console.log",
					"socket,id=qmp,path=/s/qmp.sock,server=on,wait=off",
					"socket,id=agent,path=/s/agent.sock,server=on,wait=off",
				},
				"-device": {"virtio-serial-pci,id=vser0", "virtserialport,bus=vser0.0,chardev=agent,name=org.qoslab.agent"},
			},
			absent: []string{"-drive", "vsock"},
		},
		{
			name:   "amd64 with TCG keeps a CPU model that sets the hypervisor bit",
			change: func(l *launch) { l.Accel = AccelTCG },
			want:   map[string][]string{"-accel": {"tcg,thread=multi"}, "-cpu": {"max"}},
		},
		{
			name:   "arm64 with KVM",
			change: func(l *launch) { l.Arch, l.Machine = "arm64", machineVirt },
			want: map[string][]string{
				"-machine": {"virt,gic-version=max"}, "-accel": {"kvm"}, "-cpu": {"host"},
				"-append": {"quiet console=ttyAMA0 panic=-1"},
			},
		},
		{
			name:   "arm64 with TCG",
			change: func(l *launch) { l.Arch, l.Machine, l.Accel = "arm64", machineVirt, AccelTCG },
			want:   map[string][]string{"-machine": {"virt,gic-version=max"}, "-accel": {"tcg,thread=multi"}, "-cpu": {"max,pauth-impdef=on"}},
		},
		{
			name:   "arm64 with hvf",
			change: func(l *launch) { l.Arch, l.Machine, l.Accel = "arm64", machineVirt, accelHVF },
			want:   map[string][]string{"-machine": {"virt"}, "-accel": {"hvf"}, "-cpu": {"host"}},
		},
		{
			name: "scratch disk and vsock",
			change: func(l *launch) {
				l.Disk, l.DiskCache, l.VsockCID = "/s/scratch.raw", "none", 42
			},
			want: map[string][]string{
				"-drive": {"file=/s/scratch.raw,format=raw,if=none,id=scratch,cache=none"},
				"-device": {
					"virtio-serial-pci,id=vser0", "virtserialport,bus=vser0.0,chardev=agent,name=org.qoslab.agent",
					"virtio-blk-pci,drive=scratch,serial=qoslab-scratch", "vhost-vsock-pci,guest-cid=42",
				},
			},
		},
		{
			name:   "scratch disk without O_DIRECT",
			change: func(l *launch) { l.Disk, l.DiskCache = "/s/scratch.raw", "writeback" },
			want:   map[string][]string{"-drive": {"file=/s/scratch.raw,format=raw,if=none,id=scratch,cache=writeback"}},
		},
		{
			name: "commas in paths and names are doubled inside option lists only",
			change: func(l *launch) {
				l.Name = "a,b"
				l.ConsoleLog, l.QMPSocket, l.AgentSocket = "/x,y/console.log", "/x,y/qmp.sock", "/x,y/agent.sock"
				l.Disk, l.DiskCache = "/x,y/scratch.raw", "none"
				l.Kernel, l.PIDFile = "/x,y/vmlinuz", "/x,y/qemu.pid"
			},
			want: map[string][]string{
				"-name": {"a,,b,debug-threads=on"},
				"-chardev": {
					"file,id=console,path=/x,,y/console.log",
					"socket,id=qmp,path=/x,,y/qmp.sock,server=on,wait=off",
					"socket,id=agent,path=/x,,y/agent.sock,server=on,wait=off",
				},
				"-drive":   {"file=/x,,y/scratch.raw,format=raw,if=none,id=scratch,cache=none"},
				"-kernel":  {"/x,y/vmlinuz"},
				"-pidfile": {"/x,y/qemu.pid"},
			},
		},
		{
			name:   "the image's console and panic settings win",
			change: func(l *launch) { l.Cmdline = "console=hvc0 panic=5 loglevel=3" },
			want:   map[string][]string{"-append": {"console=hvc0 panic=5 loglevel=3"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := baseLaunch()
			tt.change(&l)
			args, err := commandLine(l)
			require.NoError(t, err)
			for flag, want := range tt.want {
				assert.Equal(t, want, argValues(args, flag), flag)
			}
			for _, a := range tt.absent {
				assert.NotContains(t, strings.Join(args, " "), a)
			}
			for _, flag := range []string{"-nodefaults", "-no-user-config", "-no-reboot"} {
				assert.Contains(t, args, flag)
			}
			assert.Equal(t, []string{"none"}, argValues(args, "-display"))
		})
	}
}

func TestCommandLineRejects(t *testing.T) {
	tests := []struct {
		name   string
		change func(*launch)
		want   string
	}{
		{"q35 for arm64", func(l *launch) { l.Arch = "arm64" }, `machine "q35" for a arm64 image`},
		{"virt for amd64", func(l *launch) { l.Machine = machineVirt }, `machine "virt" for a amd64 image`},
		{"unknown accelerator", func(l *launch) { l.Accel = "whpx" }, `accelerator "whpx": want kvm, tcg or hvf`},
		{"unknown disk cache", func(l *launch) { l.Disk, l.DiskCache = "/d", "unsafe" }, `disk cache mode "unsafe"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := baseLaunch()
			tt.change(&l)
			_, err := commandLine(l)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// The guest's init looks for the agent's port by guestchan's name.
func TestGuestContract(t *testing.T) {
	args, err := commandLine(baseLaunch())
	require.NoError(t, err)
	assert.Contains(t, strings.Join(args, " "), "virtserialport,bus=vser0.0,chardev=agent,name="+guestchan.PortName)
}
