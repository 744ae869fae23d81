package vz

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const servicePath = "/System/Library/Frameworks/Virtualization.framework/Versions/A/XPCServices/com.apple.Virtualization.VirtualMachine.xpc/Contents/MacOS/com.apple.Virtualization.VirtualMachine"

// svc is a service process as the process table shows it: its name cut
// to p_comm's 16 bytes.
func svc(pid, uid int) process {
	return process{PID: pid, UID: uid, Comm: serviceName[:serviceCommLen], Path: servicePath}
}

func TestFindService(t *testing.T) {
	const me = 501
	shell := process{PID: 300, UID: me, Comm: "zsh", Path: "/bin/zsh"}
	otherVM := svc(400, me)
	impostor := process{PID: 700, UID: me, Comm: serviceName[:serviceCommLen], Path: "/tmp/com.apple.Virtualization.VirtualMachineX"}
	tests := []struct {
		name          string
		before, after []process
		want          int
		err           string
	}{
		{"the one new", []process{shell, otherVM}, []process{shell, otherVM, svc(500, me)}, 500, ""},
		{"first VM of the machine", nil, []process{shell, svc(501, me)}, 501, ""},
		{"another user's VM is not ours", []process{shell}, []process{shell, svc(502, 0), svc(503, me)}, 503, ""},
		{"a look-alike is not the service", []process{shell}, []process{shell, impostor, svc(504, me)}, 504, ""},
		{"none new", []process{shell, otherVM}, []process{shell, otherVM}, 0, "no new com.apple.Virtualization.VirtualMachine process of uid 501 appeared when the VM started (1 other such processes"},
		{"only another user's", nil, []process{svc(505, 0)}, 0, "no new com.apple.Virtualization.VirtualMachine process of uid 501"},
		{"a path that could not be read", nil, []process{{PID: 506, UID: me, Comm: serviceName[:serviceCommLen]}}, 0, "no new"},
		{"two at once", []process{shell}, []process{shell, svc(602, me), svc(601, me)}, 0, "2 new com.apple.Virtualization.VirtualMachine processes of uid 501 appeared when the VM started (pids [601 602]): another VM started at the same moment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := findService(tt.before, tt.after, me)
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				assert.Zero(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestMayBeService(t *testing.T) {
	assert.True(t, process{Comm: "com.apple.Virtua"}.mayBeService(), "p_comm keeps 16 bytes")
	assert.False(t, process{Comm: "com.apple"}.mayBeService(), "a shorter name is another process")
	assert.False(t, process{Comm: ""}.mayBeService())
	assert.False(t, process{Comm: "com.apple.Virtub"}.mayBeService())
}

// procargs2 is kern.procargs2's layout: argc, the executable's path and
// NUL padding, then the arguments.
func procargs2(argc int32, path string, args ...string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(argc))
	b = append(b, path...)
	b = append(b, 0, 0, 0)
	for _, a := range args {
		b = append(append(b, a...), 0)
	}
	return b
}

func TestExecPath(t *testing.T) {
	got, err := execPath(procargs2(1, servicePath, servicePath))
	require.NoError(t, err)
	assert.Equal(t, servicePath, got)
	_, err = execPath([]byte{1, 0})
	assert.EqualError(t, err, "kern.procargs2: 2 bytes, want at least 4 (the argument count)")
	_, err = execPath(binary.LittleEndian.AppendUint32(nil, 3))
	assert.EqualError(t, err, "kern.procargs2: no NUL-terminated executable path after argc 3")
}
