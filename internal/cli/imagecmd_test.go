package cli

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/config"
	"github.com/qoslab/qoslab/internal/image"
)

// --insecure-unsigned-index is off unless the flag, QOSLAB_IMAGE_INSECURE_UNSIGNED_INDEX
// or image.insecure-unsigned-index in the config file says otherwise, on
// both commands that may fetch a kernel.
func TestInsecureUnsignedIndexSetting(t *testing.T) {
	t.Chdir(t.TempDir())
	build := func(env map[string]string, args ...string) bool {
		t.Helper()
		var got *imageBuildOptions
		cmd := newCmdImageBuild(testFactory(t, env), func(_ context.Context, o *imageBuildOptions) error { got = o; return nil })
		cmd.SetArgs(append([]string{"linux"}, args...))
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		require.NoError(t, cmd.Execute())
		return got.InsecureUnsignedIndex
	}
	fetch := func(env map[string]string, args ...string) bool {
		t.Helper()
		var got *imageFetchKernelOptions
		cmd := newCmdImageFetchKernel(testFactory(t, env), func(_ context.Context, o *imageFetchKernelOptions) error { got = o; return nil })
		cmd.SetArgs(args)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		require.NoError(t, cmd.Execute())
		return got.InsecureUnsignedIndex
	}
	for name, parse := range map[string]func(map[string]string, ...string) bool{"image build linux": build, "image fetch-kernel": fetch} {
		assert.False(t, parse(nil), "%s: off by default", name)
		assert.True(t, parse(nil, "--insecure-unsigned-index"), "%s: the flag", name)
		assert.True(t, parse(map[string]string{"QOSLAB_IMAGE_INSECURE_UNSIGNED_INDEX": "1"}), "%s: the environment", name)
		assert.False(t, parse(map[string]string{"QOSLAB_IMAGE_INSECURE_UNSIGNED_INDEX": "1"}, "--insecure-unsigned-index=false"), "%s: the flag wins", name)
	}
	require.NoError(t, os.WriteFile("qoslab.yaml", []byte("image:\n  insecure-unsigned-index: true\n"), 0o644))
	assert.True(t, build(nil), "the config file")
	assert.True(t, fetch(nil), "the config file")
}

// The Debian mirror is read from the factory's environment where the
// command's settings are assembled, with the variable it came from, and
// reaches the fetch's options; the process's environment is not read.
func TestDebianMirrorComesFromTheFactoryEnv(t *testing.T) {
	t.Setenv("QOSLAB_DEBIAN_MIRROR", "http://process.example/debian")
	mirror := func(env map[string]string) config.Value {
		t.Helper()
		var got *imageFetchKernelOptions
		cmd := newCmdImageFetchKernel(testFactory(t, env), func(_ context.Context, o *imageFetchKernelOptions) error { got = o; return nil })
		cmd.SetArgs(nil)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		require.NoError(t, cmd.Execute())
		bo, err := buildOptions(&got.imageOptions, got.BuildSettings, image.BuildSettings.KernelOptions)
		require.NoError(t, err)
		return bo.Mirror
	}
	assert.Equal(t, config.Value{Value: "http://m.example/debian", Source: "QOSLAB_DEBIAN_MIRROR"}, mirror(map[string]string{"QOSLAB_DEBIAN_MIRROR": "http://m.example/debian"}))
	assert.Equal(t, config.Value{Source: "QOSLAB_DEBIAN_MIRROR"}, mirror(nil), "unset in the factory's environment")
}

func TestImageListJSON(t *testing.T) {
	store := t.TempDir()
	streams, out, _ := testIO()
	f := NewFactory(streams)
	cmd := newCmdImageList(f, nil)
	cmd.SetArgs([]string{"--image-store", store, "--json"})
	require.NoError(t, cmd.Execute())
	assert.JSONEq(t, "[]", out.String(), "an empty store is an empty list, for scripts")

	require.NoError(t, os.MkdirAll(filepath.Join(store, "broken"), 0o755))
	out.Reset()
	cmd = newCmdImageList(f, nil)
	cmd.SetArgs([]string{"--image-store", store, "--json"})
	require.NoError(t, cmd.Execute())
	var entries []map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &entries))
	require.Len(t, entries, 1)
}

func TestImageProvisionArguments(t *testing.T) {
	streams, _, errOut := testIO()
	f := NewFactory(streams)
	home := t.TempDir()
	f.Env = func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	run := func(args ...string) error {
		root := NewCmdRoot(f)
		root.SetArgs(args)
		return root.Execute()
	}
	err := run("image", "provision", "mac", "--via", "ftp")
	assert.ErrorContains(t, err, `--via "ftp"`)
	assert.True(t, isUsageError(err))
	err = run("image", "provision", "mac", "--via", "ssh")
	assert.ErrorContains(t, err, "--via ssh needs one USER@ADDR")
	err = run("image", "provision", "../etc")
	assert.ErrorContains(t, err, "use letters, digits")
	// A well-formed call gets as far as finding the bundle or the agent, and says which is missing.
	err = run("image", "provision", "mac", "--via", "ssh", "admin@192.0.2.1", "--guest-agent", filepath.Join(home, "none"))
	require.Error(t, err)
	assert.False(t, isUsageError(err), "%v", err)
	_ = errOut
}
