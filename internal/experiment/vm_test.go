package experiment

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/spec"
)

func TestVMFitsThisHost(t *testing.T) {
	s, err := spec.DefaultSpec("subsumption")
	require.NoError(t, err)
	s.VM.CPUs = runtime.NumCPU() + 2
	v, notes := fitVM(s.VM, VMEnv{Backend: "qemu", Accel: "tcg"})
	assert.Equal(t, runtime.NumCPU(), v.CPUs, "qemu gives a VM at most the host's CPUs")
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "asked")
	assert.Equal(t, "tcg", v.Accel, "the env's overrides win over the spec")
	assert.Equal(t, DefaultImage(), v.Image)

}

// The vz model is the qemu backend's, boots arm64 images by default, and
// --vm-model overrides the spec's vm.model.
func TestVMModel(t *testing.T) {
	tests := []struct {
		name      string
		spec      spec.VMSpec
		env       VMEnv
		wantModel string
		wantImage string
		wantErr   string
	}{
		{"the default", spec.VMSpec{Backend: "qemu"}, VMEnv{}, "", DefaultImage(), ""},
		{"default said is the default", spec.VMSpec{Backend: "qemu", Model: hv.ModelDefault}, VMEnv{}, "", DefaultImage(), ""},
		{"vz from the spec", spec.VMSpec{Backend: "qemu", Model: hv.ModelVZ}, VMEnv{}, hv.ModelVZ, "linux-arm64", ""},
		{"vz from the flag", spec.VMSpec{Backend: "qemu"}, VMEnv{Model: hv.ModelVZ}, hv.ModelVZ, "linux-arm64", ""},
		{"the flag wins", spec.VMSpec{Backend: "qemu", Model: hv.ModelVZ}, VMEnv{Model: hv.ModelDefault}, "", DefaultImage(), ""},
		{"an image given is kept", spec.VMSpec{Backend: "qemu", Model: hv.ModelVZ, Image: "mine"}, VMEnv{}, hv.ModelVZ, "mine", ""},
		{"vz on the vz backend", spec.VMSpec{Backend: "vz"}, VMEnv{Model: hv.ModelVZ}, hv.ModelVZ, "linux-arm64", "runs on the qemu backend, not vz: use --vm-backend qemu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, notes := fitVM(tt.spec, tt.env)
			if tt.env.Model != "" && modelName(tt.env.Model) != modelName(tt.spec.Model) {
				assert.Contains(t, notes, "vm.model "+modelName(tt.env.Model)+" applied (--vm-model); the spec asked for "+modelName(tt.spec.Model), "what was asked and what was applied")
			} else {
				assert.Empty(t, notes)
			}
			assert.Equal(t, tt.wantModel, v.Model)
			assert.Equal(t, tt.wantImage, v.Image)
			err := checkModel(v)
			if tt.wantErr == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tt.wantErr)
			}
		})
	}
}

func TestApplyHostQoS(t *testing.T) {
	notes := applyHostQoS(hv.MachineInfo{Backend: "vz"}, qos.UserInteractive)
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "user-interactive asked, not applied")

	// A real thread of another process stands in for a vCPU thread.
	cmd := exec.Command("sleep", "30")
	require.NoError(t, cmd.Start())
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	notes = applyHostQoS(hv.MachineInfo{Backend: "qemu", VCPUThreads: []int{cmd.Process.Pid}}, qos.Utility)
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "utility asked, utility applied")
	assert.Contains(t, notes[0], "SCHED_BATCH")
}

func TestDefaultVMEnvFollowsXDG(t *testing.T) {
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	e := DefaultVMEnv(env(map[string]string{"HOME": "/home/u"}), VMEnv{})
	assert.Equal(t, "/home/u/.local/state/qoslab", e.StateHome)
	assert.Equal(t, "/home/u/.cache/qoslab", e.CacheDir)
	assert.Equal(t, "/home/u/.cache/qoslab/images", e.Store)

	e = DefaultVMEnv(env(map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "/s", "XDG_CACHE_HOME": "relative"}), VMEnv{Store: "/mine"})
	assert.Equal(t, "/s/qoslab", e.StateHome)
	assert.Equal(t, "/home/u/.cache/qoslab", e.CacheDir, "a relative XDG directory is ignored, as the XDG spec says")
	assert.Equal(t, "/mine", e.Store, "a store given stays")
	assert.Equal(t, []string{"/home/u/.cargo/bin"}, e.Registry().VhostVsockDirs, "the backends look for the vz model's device in cargo's bin")

	e = DefaultVMEnv(env(map[string]string{"HOME": "/home/u", "CARGO_HOME": "/opt/cargo"}), VMEnv{})
	assert.Equal(t, []string{"/opt/cargo/bin"}, e.Registry().VhostVsockDirs)
	assert.Empty(t, DefaultVMEnv(env(nil), VMEnv{}).Registry().VhostVsockDirs, "neither CARGO_HOME nor HOME: PATH only")
}

// A boot error names the console where it is kept, never the state
// directory's copy, which is gone by the time the user reads the error.
func TestBootErrorNamesTheKeptConsole(t *testing.T) {
	dir, keep := "/tmp/qoslab-vm-123", "/r/run-1/vm-console.log"
	inner := fmt.Errorf("start VM run-1: no agent before the deadline (4s): boom; console: %s/console.log", dir)
	err := fmt.Errorf("boot vm: %w", &consoleMovedError{err: inner, dir: dir, keep: keep})
	assert.Equal(t, "boot vm: start VM run-1: no agent before the deadline (4s): boom; console: /r/run-1/vm-console.log", err.Error())
	assert.ErrorIs(t, err, inner)

	quiet := &consoleMovedError{err: errors.New("qemu exited with status 1"), dir: dir, keep: keep}
	assert.Equal(t, "qemu exited with status 1; console: /r/run-1/vm-console.log", quiet.Error())
}
