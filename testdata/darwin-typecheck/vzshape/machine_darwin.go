package vzshape

/*
#cgo darwin CFLAGS: -x objective-c -fno-objc-arc
#import <Virtualization/Virtualization.h>

static void *newMachine(void *config) {
	return [[VZVirtualMachine alloc] initWithConfiguration:(VZVirtualMachineConfiguration *)config];
}

static void startMachine(void *machine) {
	[(VZVirtualMachine *)machine startWithCompletionHandler:^(NSError *err) {}];
}

static int machineState(void *machine) {
	return (int)[(VZVirtualMachine *)machine state];
}
*/
import "C"

import "runtime"

// VirtualMachineState is a VZVirtualMachineState.
type VirtualMachineState int

// The states a machine goes through.
const (
	VirtualMachineStateStopped VirtualMachineState = iota
	VirtualMachineStateRunning
	VirtualMachineStatePaused
	VirtualMachineStateError
)

// VirtualMachineStartOption sets an optional part of starting a machine.
type VirtualMachineStartOption func(*startOptions)

type startOptions struct {
	recovery bool
}

// WithStartUpFromMacOSRecovery boots a macOS guest into recovery.
func WithStartUpFromMacOSRecovery(recovery bool) VirtualMachineStartOption {
	return func(o *startOptions) { o.recovery = recovery }
}

// VirtualMachine is a VZVirtualMachine.
type VirtualMachine struct {
	pointer
	states chan VirtualMachineState
}

// NewVirtualMachine makes a machine from a validated configuration.
func NewVirtualMachine(config *VirtualMachineConfiguration) (*VirtualMachine, error) {
	m := &VirtualMachine{pointer: pointer{ptr: C.newMachine(config.ptr)}, states: make(chan VirtualMachineState, 1)}
	runtime.SetFinalizer(m, (*VirtualMachine).release)
	return m, nil
}

// Start boots the machine.
func (m *VirtualMachine) Start(opts ...VirtualMachineStartOption) error {
	var o startOptions
	for _, opt := range opts {
		opt(&o)
	}
	C.startMachine(m.ptr)
	return nil
}

// State is the machine's current state.
func (m *VirtualMachine) State() VirtualMachineState {
	return VirtualMachineState(C.machineState(m.ptr))
}

// StateChangedNotify delivers every state the machine enters.
func (m *VirtualMachine) StateChangedNotify() <-chan VirtualMachineState { return m.states }
