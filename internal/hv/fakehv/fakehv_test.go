package fakehv_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/cli"
	"github.com/qoslab/qoslab/internal/doctor"
	"github.com/qoslab/qoslab/internal/guestvm"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/hv/fakehv"
	"github.com/qoslab/qoslab/internal/hv/registry"
	"github.com/qoslab/qoslab/internal/spec"
)

const fp = "matrix: [{workload: fp, qos: [9], threads: [1], loops: 1000}]\n"

func TestTheRegistryListsIt(t *testing.T) {
	assert.Equal(t, []string{registry.QEMU, registry.VZ, fakehv.Name}, registry.Names())
	assert.Equal(t, []string{"kvm", "tcg", "hvf", fakehv.Accel}, registry.Accels())
	assert.Equal(t, []string{hv.ModelDefault, hv.ModelVZ, fakehv.Model}, registry.Models())
	assert.NotEqual(t, fakehv.Name, registry.Default(), "registering is not becoming the default")
	assert.Empty(t, registry.NotApplicable(fakehv.Name))
	b, err := registry.New(fakehv.Name, registry.Options{})
	require.NoError(t, err)
	_, err = b.Start(context.Background(), hv.Spec{})
	assert.ErrorIs(t, err, fakehv.ErrNoBoot)
}

func TestSpecValidationTakesItsNames(t *testing.T) {
	s, err := spec.ParseSpec([]byte(fp+"vm: {backend: fake, accel: fakeaccel, model: fakemodel, cpus: 4}\n"), "fake")
	require.NoError(t, err)
	assert.Equal(t, fakehv.Name, s.VM.Backend)
	assert.Equal(t, fakehv.Accel, s.VM.Accel)
	assert.Equal(t, fakehv.Model, s.VM.Model)

	for _, tc := range []struct{ name, vm, want string }{
		{"its own validation", "{backend: fake, cpus: 8}", "vm.cpus 8: the fake backend gives at most 4"},
		{"another backend's accel", "{backend: fake, accel: kvm}", `vm.accel "kvm": the fake backend takes fakeaccel`},
		{"its accel elsewhere", "{backend: qemu, accel: fakeaccel}", `vm.accel "fakeaccel": the qemu backend takes kvm, tcg, hvf`},
		{"a backend without accels", "{backend: vz, accel: fakeaccel}", `vm.accel "fakeaccel": only the qemu and fake backends take an accelerator`},
		{"its model elsewhere", "{backend: qemu, model: fakemodel}", `vm.model "fakemodel" with vm.backend qemu: the fakemodel model is the fake backend's layout; with vm.backend qemu leave vm.model out (or use vm.backend fake)`},
		{"another backend's model", "{backend: fake, model: vz}", `vm.model "vz" with vm.backend fake: the vz model is the qemu backend's emulation`},
		{"unknown accel", "{accel: whpx}", `vm.accel "whpx": allowed kvm, tcg, hvf, fakeaccel`},
		{"unknown model", "{model: vmware}", `vm.model "vmware": allowed default, vz, fakemodel`},
		{"unknown backend", "{backend: xen}", `vm.backend "xen": allowed qemu, vz, fake`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := spec.ParseSpec([]byte(fp+"vm: "+tc.vm+"\n"), "fake")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	assert.ErrorContains(t, guestvm.CheckModel(spec.VMSpec{Backend: registry.QEMU, Model: fakehv.Model}),
		"vm.model fakemodel runs on the fake backend, not qemu: use --vm-backend fake")
}

func TestDoctorListsIt(t *testing.T) {
	var found []doctor.Check
	for _, c := range doctor.Checks(context.Background(), "", guestvm.Env{Store: t.TempDir(), CacheDir: t.TempDir()}, t.TempDir()) {
		if strings.HasPrefix(c.Name, fakehv.Name+": ") {
			found = append(found, c)
		}
	}
	require.Len(t, found, 1)
	assert.Equal(t, "fake: nothing", found[0].Name)
	assert.True(t, found[0].OK)
	assert.False(t, found[0].NotApplicable)
}

// complete is what the shell's completion asks the command tree for.
func complete(t *testing.T, args ...string) []string {
	t.Helper()
	out := &bytes.Buffer{}
	f := cli.NewFactory(&cli.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: &bytes.Buffer{}})
	f.Env = func(k string) string {
		if k == "HOME" {
			return t.TempDir()
		}
		return ""
	}
	root := cli.NewCmdRoot(f)
	root.SetArgs(append([]string{"__complete"}, args...))
	require.NoError(t, root.Execute())
	var words []string
	for _, l := range strings.Split(out.String(), "\n") {
		if l != "" && !strings.HasPrefix(l, ":") {
			words = append(words, l)
		}
	}
	return words
}

func TestFlagsCompleteAndTakeItsNames(t *testing.T) {
	for _, cmd := range [][]string{{"run"}, {"bench"}, {"vm", "start", "x"}} {
		assert.Contains(t, complete(t, append(cmd, "--vm-backend", "")...), fakehv.Name, cmd)
		assert.Contains(t, complete(t, append(cmd, "--accel", "")...), fakehv.Accel, cmd)
	}
	for _, cmd := range [][]string{{"run"}, {"bench"}} {
		assert.Equal(t, []string{hv.ModelDefault, hv.ModelVZ, fakehv.Model}, complete(t, append(cmd, "--vm-model", "")...), cmd)
	}
}

// execute runs the command tree on args, with a HOME and caches of the
// test's own.
func execute(t *testing.T, args ...string) error {
	t.Helper()
	f := cli.NewFactory(&cli.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
	home := t.TempDir()
	f.Env = func(k string) string {
		if k == "HOME" || k == "XDG_CACHE_HOME" || k == "XDG_STATE_HOME" {
			return home
		}
		return ""
	}
	root := cli.NewCmdRoot(f)
	root.SetArgs(args)
	return root.Execute()
}

func TestFlagsTakeItsNames(t *testing.T) {
	// Past the flags' checks: what stops it is the image it would boot.
	err := execute(t, "vm", "start", "x", "--vm-backend", fakehv.Name, "--accel", fakehv.Accel, "--image-store", t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is not built")

	err = execute(t, "vm", "start", "x", "--vm-backend", fakehv.Name, "--accel", "kvmx")
	assert.ErrorContains(t, err, `--accel "kvmx": allowed kvm, tcg, hvf, fakeaccel`)
	err = execute(t, "run", "--vm-backend", registry.QEMU, "--vm-model", fakehv.Model)
	assert.ErrorContains(t, err, "--vm-model fakemodel: the fakemodel model is the fake backend's layout; with --vm-backend qemu leave it out, or use --vm-backend fake")
}

func TestHelpNamesIt(t *testing.T) {
	root := cli.NewCmdRoot(cli.NewFactory(&cli.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}))
	run, _, err := root.Find([]string{"run"})
	require.NoError(t, err)
	assert.Contains(t, run.Flags().Lookup("vm-backend").Usage, "qemu, vz, fake")
	assert.Contains(t, run.Flags().Lookup("accel").Usage, "kvm, tcg, hvf, fakeaccel")
	assert.Contains(t, run.Flags().Lookup("vm-model").Usage, "default, vz, fakemodel")
	assert.Contains(t, run.Flags().Lookup("vm-model").Usage, "; fakemodel lays nothing out: the fake backend's, for tests")
}
