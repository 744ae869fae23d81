package hv

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultBootTimeout(t *testing.T) {
	macOS := Image{OS: OSMacOS}
	for _, tc := range []struct {
		name string
		m    MachineInfo
		want time.Duration
	}{
		{"qemu, emulated", MachineInfo{Backend: "qemu", Accel: AccelTCG}, 5 * time.Minute},
		{"qemu, the vz model emulated", MachineInfo{Backend: "qemu", Accel: AccelTCG, Model: ModelVZ}, 5 * time.Minute},
		{"qemu, KVM", MachineInfo{Backend: "qemu", Accel: "kvm"}, 90 * time.Second},
		{"qemu, hvf", MachineInfo{Backend: "qemu", Accel: "hvf"}, 90 * time.Second},
		{"vz, a Linux guest", MachineInfo{Backend: "vz", Accel: "vz"}, 90 * time.Second},
		{"vz, a Linux guest named so", MachineInfo{Backend: "vz", Accel: "vz", Image: Image{OS: OSLinux}}, 90 * time.Second},
		// A first macOS boot takes minutes: the 90 s every accelerated
		// guest had would stop it half way.
		{"vz, a macOS guest", MachineInfo{Backend: "vz", Accel: "vz", Image: macOS}, 5 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, DefaultBootTimeout(tc.m))
		})
	}
	assert.Equal(t, OSLinux, Image{}.GuestOS(), "an image that names no OS is a Linux image")
	assert.Equal(t, OSMacOS, macOS.GuestOS())
}

// endingMachine is a Machine whose end the test decides.
type endingMachine struct{ Lifecycle }

func (*endingMachine) DialAgent(context.Context) (net.Conn, error) {
	return nil, errors.New("no agent")
}
func (*endingMachine) Info() MachineInfo          { return MachineInfo{Name: "lab"} }
func (*endingMachine) Stop(context.Context) error { return nil }

// AwaitReady returns ready's answer while the VM runs; once the VM ends,
// ready's context ends with it and the error says the VM ended, and why.
func TestAwaitReady(t *testing.T) {
	crashed := errors.New("exit status 1")
	waitForEnd := func(ctx context.Context, _ Machine) error {
		<-ctx.Done()
		return ctx.Err()
	}
	for _, tc := range []struct {
		name    string
		ready   func(context.Context, Machine) error
		end     *error // the VM ends while ready waits, with this error
		want    string
		wrapped error
	}{
		{"the agent answers", func(context.Context, Machine) error { return nil }, nil, "", nil},
		{"ready fails while the VM runs", func(context.Context, Machine) error { return crashed }, nil, "exit status 1", crashed},
		{"the VM crashes", waitForEnd, &crashed, "qemu ended before the agent answered: exit status 1", crashed},
		{"the VM powers off", waitForEnd, new(error), "qemu ended before the agent answered", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &endingMachine{}
			if tc.end != nil {
				go func() {
					time.Sleep(10 * time.Millisecond)
					m.Finish(*tc.end)
				}()
			}
			err := AwaitReady(context.Background(), m, tc.ready, "qemu")
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tc.want)
			if tc.wrapped != nil {
				assert.ErrorIs(t, err, tc.wrapped)
			}
		})
	}
}
