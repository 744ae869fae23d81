package guestvm

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/spec"
)

func TestVMFitsThisHost(t *testing.T) {
	s, err := spec.DefaultSpec("subsumption")
	require.NoError(t, err)
	s.VM.CPUs = runtime.NumCPU() + 2
	v, notes := Fit(s.VM, Env{Backend: "qemu", Accel: "tcg"})
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
		env       Env
		wantModel string
		wantImage string
		wantErr   string
	}{
		{"the default", spec.VMSpec{Backend: "qemu"}, Env{}, "", DefaultImage(), ""},
		{"default said is the default", spec.VMSpec{Backend: "qemu", Model: hv.ModelDefault}, Env{}, "", DefaultImage(), ""},
		{"vz from the spec", spec.VMSpec{Backend: "qemu", Model: hv.ModelVZ}, Env{}, hv.ModelVZ, "linux-arm64", ""},
		{"vz from the flag", spec.VMSpec{Backend: "qemu"}, Env{Model: hv.ModelVZ}, hv.ModelVZ, "linux-arm64", ""},
		{"the flag wins", spec.VMSpec{Backend: "qemu", Model: hv.ModelVZ}, Env{Model: hv.ModelDefault}, "", DefaultImage(), ""},
		{"an image given is kept", spec.VMSpec{Backend: "qemu", Model: hv.ModelVZ, Image: "mine"}, Env{}, hv.ModelVZ, "mine", ""},
		{"vz on the vz backend", spec.VMSpec{Backend: "vz"}, Env{Model: hv.ModelVZ}, hv.ModelVZ, "linux-arm64", "runs on the qemu backend, not vz: use --vm-backend qemu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, notes := Fit(tt.spec, tt.env)
			if tt.env.Model != "" && modelName(tt.env.Model) != modelName(tt.spec.Model) {
				assert.Contains(t, notes, "vm.model "+modelName(tt.env.Model)+" applied (--vm-model); the spec asked for "+modelName(tt.spec.Model), "what was asked and what was applied")
			} else {
				assert.Empty(t, notes)
			}
			assert.Equal(t, tt.wantModel, v.Model)
			assert.Equal(t, tt.wantImage, v.Image)
			err := CheckModel(v)
			if tt.wantErr == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tt.wantErr)
			}
		})
	}
}

func TestDefaultEnvFollowsXDG(t *testing.T) {
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	e := DefaultEnv(env(map[string]string{"HOME": "/home/u"}), Env{})
	assert.Equal(t, "/home/u/.local/state/qoslab", e.StateHome)
	assert.Equal(t, "/home/u/.cache/qoslab", e.CacheDir)
	assert.Equal(t, "/home/u/.cache/qoslab/images", e.Store)

	e = DefaultEnv(env(map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "/s", "XDG_CACHE_HOME": "relative"}), Env{Store: "/mine"})
	assert.Equal(t, "/s/qoslab", e.StateHome)
	assert.Equal(t, "/home/u/.cache/qoslab", e.CacheDir, "a relative XDG directory is ignored, as the XDG spec says")
	assert.Equal(t, "/mine", e.Store, "a store given stays")
	assert.Equal(t, []string{"/home/u/.cargo/bin"}, e.Registry().VhostVsockDirs, "the backends look for the vz model's device in cargo's bin")

	e = DefaultEnv(env(map[string]string{"HOME": "/home/u", "CARGO_HOME": "/opt/cargo"}), Env{})
	assert.Equal(t, []string{"/opt/cargo/bin"}, e.Registry().VhostVsockDirs)
	assert.Empty(t, DefaultEnv(env(nil), Env{}).Registry().VhostVsockDirs, "neither CARGO_HOME nor HOME: PATH only")
}
