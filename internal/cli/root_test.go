package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/hv/registry"
)

// runRoot runs `qoslab args...` with env and returns stdout, stderr and the
// exit status Execute gives.
func runRoot(t *testing.T, env map[string]string, args ...string) (string, string, int) {
	t.Helper()
	f := testFactory(t, env)
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	f.IO.Out, f.IO.ErrOut = out, errOut
	code := Execute(context.Background(), f, args)
	return out.String(), errOut.String(), code
}

func TestMistypedSubcommandIsAUsageError(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"vm", "delet", "x"}, []string{`unknown command "delet" for "qoslab vm"`, "did you mean delete?"}},
		{[]string{"results", "nope"}, []string{`unknown command "nope" for "qoslab results"`, "allowed list, prune, rm, show"}},
		{[]string{"image", "bild", "linux"}, []string{"did you mean build?"}},
		{[]string{"benhc"}, []string{`unknown command "benhc"`, "bench"}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			_, stderr, code := runRoot(t, nil, c.args...)
			assert.Equal(t, 2, code, stderr)
			for _, w := range c.want {
				assert.Contains(t, stderr, w)
			}
		})
	}
	out, _, code := runRoot(t, nil, "vm")
	assert.Equal(t, 0, code, "a group alone prints its help")
	assert.Contains(t, out, "Available Commands")
}

func TestSettingsNameWhereABadValueCameFrom(t *testing.T) {
	t.Chdir(t.TempDir())
	cases := []struct {
		name string
		env  map[string]string
		file string
		want string
	}{
		{"variable not a number", map[string]string{"QOSLAB_BENCH_REPEAT": "x"}, "", `QOSLAB_BENCH_REPEAT "x": want a whole number`},
		{"variable out of range", map[string]string{"QOSLAB_BENCH_REPEAT": "0"}, "", "QOSLAB_BENCH_REPEAT 0: allowed 1..1000"},
		{"variable list", map[string]string{"QOSLAB_BENCH_TARGET": "cloud"}, "", `QOSLAB_BENCH_TARGET "cloud": allowed host, vm`},
		{"file count", nil, "bench:\n  loops: abc\n", `bench.loops in qoslab.yaml "abc"`},
		{"file class", nil, "bench:\n  qos: [urgent]\n", `bench.qos in qoslab.yaml: unknown QoS class "urgent"`},
		{"file backend", nil, "bench:\n  vm-backend: xen\n", `bench.vm-backend in qoslab.yaml: unknown VM backend "xen": allowed qemu, vz`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			os.Remove("qoslab.yaml")
			if c.file != "" {
				require.NoError(t, os.WriteFile("qoslab.yaml", []byte(c.file), 0o644))
			}
			_, err := parseBench(t, c.env)
			require.Error(t, err)
			assert.ErrorContains(t, err, c.want)
			assert.True(t, isUsageError(err))
			assert.NotContains(t, err.Error(), "--", "a value the user did not type as a flag is not named as one")
		})
	}
}

func TestSharedKeysReachEveryCommand(t *testing.T) {
	t.Chdir(t.TempDir())
	require.NoError(t, os.WriteFile("qoslab.yaml", []byte("results: /from/config\nimage-store: /images\nagent: /bin/agent\n"), 0o644))
	o, err := parseBench(t, nil, "--save")
	require.NoError(t, err)
	assert.Equal(t, "/from/config", o.Results)
	assert.Equal(t, "/images", o.VMEnv.Store)
	assert.Equal(t, "/bin/agent", o.AgentPath)

	var run *runOptions
	cmd := newCmdRun(testFactory(t, map[string]string{"QOSLAB_RESULTS": "/from/env"}), func(_ context.Context, o *runOptions) error { run = o; return nil })
	cmd.SetArgs(nil)
	require.NoError(t, cmd.Execute())
	assert.Equal(t, "/from/env", run.Results, "QOSLAB_RESULTS is the same setting for run")
	assert.Equal(t, "/images", run.VMEnv.Store)

	var list *imageListOptions
	cmd = newCmdImageList(testFactory(t, nil), func(_ context.Context, o *imageListOptions) error { list = o; return nil })
	cmd.SetArgs([]string{"--store", "/typed"})
	require.NoError(t, cmd.Execute())
	assert.Equal(t, "/typed", list.Store, "--store is another name of --image-store")
}

func TestUnknownBackendIsRefused(t *testing.T) {
	t.Chdir(t.TempDir())
	_, err := parseBench(t, nil, "--target", "vm", "--vm-backend", "qemo")
	require.Error(t, err)
	// The allowed names are the registry's, whatever backends it holds.
	assert.ErrorContains(t, err, `--vm-backend: unknown VM backend "qemo": allowed `+strings.Join(registry.Names(), ", ")+`; did you mean qemu?`)
	assert.True(t, isUsageError(err))
}

func TestCompletionOffersValues(t *testing.T) {
	complete := func(args ...string) string {
		out, stderr, code := runRoot(t, nil, append([]string{cobra.ShellCompRequestCmd}, args...)...)
		require.Equal(t, 0, code, stderr)
		return out
	}
	assert.Contains(t, complete("bench", "--workload", ""), "fp\n")
	assert.Contains(t, complete("bench", "--workload", "fp,"), "fp,compress\n", "a list completes item by item")
	assert.Contains(t, complete("bench", "--qos", ""), "user-interactive\n")
	assert.Contains(t, complete("bench", "--format", ""), "md\n")
	assert.Contains(t, complete("run", "--default", ""), "subsumption\n")
	assert.Contains(t, complete("run", "--vm-backend", ""), "qemu\n")
	assert.Contains(t, complete("run", "--vm-model", ""), "vz\n")
	assert.Contains(t, complete("bench", "--vm-model", ""), "vz\n")
	assert.Contains(t, complete("plot", "x", "--only", ""), "throughput\n")
}

func TestEveryCommandHasAManPageAndReadableFlags(t *testing.T) {
	root := NewCmdRoot(testFactory(t, nil))
	dir := t.TempDir()
	require.NoError(t, WriteManPages(root, &doc.GenManHeader{Title: "QOSLAB", Section: "1"}, dir))
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || !c.IsAvailableCommand() && c != root {
			return
		}
		page := filepath.Join(dir, strings.ReplaceAll(c.CommandPath(), " ", "-")+".1")
		require.FileExists(t, page)
		b, err := os.ReadFile(page)
		require.NoError(t, err)
		assert.Contains(t, string(b), ".SH EXIT STATUS\n.TP\n\\fB0\\fP\n", "%s: every page says its exit statuses", c.CommandPath())
		assert.Contains(t, string(b), "\\fB130\\fP")
		c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
			name, _ := pflag.UnquoteUsage(fl)
			assert.NotContains(t, name, " ", "%s --%s shows its value as %q", c.CommandPath(), fl.Name, name)
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for page, want := range map[string]string{
		"qoslab-run.1":          "with \\-\\-exit\\-status: a verdict is no",
		"qoslab-results-show.1": "\\fB4\\fP\nwith \\-\\-exit\\-status",
		"qoslab-compare.1":      "with \\-\\-fail\\-on PCT",
	} {
		b, err := os.ReadFile(filepath.Join(dir, page))
		require.NoError(t, err)
		assert.Contains(t, string(b), want, page)
	}
}

// A failure whose text reads like cobra's complaints (EINVAL is "invalid
// argument") is still a failure: exit 1, and no pointer to the help.
func TestRuntimeErrorsAreNotUsageErrors(t *testing.T) {
	file, err := os.Create(filepath.Join(t.TempDir(), "f"))
	require.NoError(t, err)
	defer file.Close()
	_, seekErr := file.Seek(0, 99) // lseek(2) refuses whence 99 with EINVAL
	require.ErrorIs(t, seekErr, syscall.EINVAL)
	require.ErrorContains(t, seekErr, "invalid argument")

	kvm := &os.PathError{Op: "open", Path: "/dev/kvm", Err: syscall.EINVAL}
	protocol := errors.New("the agent accepts only protocol 1")
	for _, e := range []error{kvm, protocol, seekErr, fmt.Errorf("boot: %w", kvm)} {
		assert.False(t, isUsageError(e), "%v", e)

		f := testFactory(t, nil)
		var stderr bytes.Buffer
		f.IO.ErrOut = &stderr
		root := NewCmdRoot(f)
		root.AddCommand(&cobra.Command{Use: "fail", RunE: func(*cobra.Command, []string) error { return e }})
		code := executeRoot(context.Background(), f, root, []string{"fail"})
		assert.Equal(t, 1, code, "%v", e)
		assert.Equal(t, "qoslab: "+e.Error()+"\n", stderr.String(), "no usage hint")
	}
}

// Every way of calling qoslab wrong is exit 2 with a pointer to the help of
// the command it was made on: cobra's own refusals (flags, argument counts,
// a word that names no command) as well as qoslab's.
func TestCallingQoslabWrongIsAUsageError(t *testing.T) {
	cases := []struct {
		args []string
		want string
		help string
	}{
		{[]string{"bench", "--bogus"}, "unknown flag: --bogus", "qoslab bench"},
		{[]string{"--bogus"}, "unknown flag: --bogus", "qoslab"},
		{[]string{"bench", "-Z"}, "unknown shorthand flag: 'Z' in -Z", "qoslab bench"},
		{[]string{"bench", "--repeat"}, "flag needs an argument: --repeat", "qoslab bench"},
		{[]string{"bench", "--repeat", "x"}, `invalid argument "x" for "--repeat" flag`, "qoslab bench"},
		{[]string{"results", "list", "--json=maybe"}, `invalid argument "maybe" for "--json" flag`, "qoslab results list"},
		{[]string{"plot", "a", "b"}, "qoslab plot takes one results directory", "qoslab plot"},
		{[]string{"bench", "extra"}, "takes no arguments", "qoslab bench"},
		{[]string{"completion", "bash", "extra"}, `unknown command "extra" for "qoslab completion bash"`, "qoslab completion bash"},
		{[]string{"bogus"}, `unknown command "bogus" for "qoslab"`, "qoslab"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			t.Chdir(t.TempDir())
			_, stderr, code := runRoot(t, nil, c.args...)
			assert.Equal(t, 2, code, stderr)
			assert.Contains(t, stderr, c.want)
			assert.Contains(t, stderr, "\nRun '"+c.help+" --help' for usage.\n")
		})
	}
	// The commands qoslab runs of itself check their argument count with
	// cobra's ExactArgs.
	n := 0
	for _, c := range NewCmdRoot(testFactory(t, nil)).Commands() {
		if !c.Hidden || c.Args == nil {
			continue
		}
		n++
		_, stderr, code := runRoot(t, nil, c.Name())
		assert.Equal(t, 2, code, "%s: %s", c.Name(), stderr)
		assert.Contains(t, stderr, "accepts 1 arg(s), received 0", c.Name())
		assert.Contains(t, stderr, "Run 'qoslab "+c.Name()+" --help' for usage.", c.Name())
	}
	assert.Equal(t, 2, n, "the spinner and the vz host")
}

// --boot-timeout's help says its defaults as hv decides them, on every
// command that boots a VM: a user with a macOS guest reads there that its
// first boot gets minutes.
func TestBootTimeoutHelpStatesTheDefaults(t *testing.T) {
	f := testFactory(t, nil)
	for _, cmd := range []*cobra.Command{
		newCmdBench(f, nil), newCmdRun(f, nil), newCmdVMStart(f, nil),
	} {
		fl := cmd.Flags().Lookup("boot-timeout")
		require.NotNil(t, fl, cmd.Name())
		for _, want := range []string{
			hv.DefaultBootTimeout(hv.MachineInfo{Backend: "qemu", Accel: hv.AccelTCG}).String() + " under TCG",
			hv.DefaultBootTimeout(hv.MachineInfo{Backend: "vz", Accel: "vz", Image: hv.Image{OS: hv.OSMacOS}}).String() + " for a macOS guest",
			hv.DefaultBootTimeout(hv.MachineInfo{Backend: "vz", Accel: "vz"}).String() + " otherwise",
		} {
			assert.Contains(t, fl.Usage, want, cmd.Name())
		}
	}
}
