package cli

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
