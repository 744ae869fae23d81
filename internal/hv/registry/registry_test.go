package registry

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUnknownBackendIsNeverAFallback(t *testing.T) {
	assert.Equal(t, []string{QEMU, VZ}, Names())
	_, err := New("qemo", Options{})
	var unknown *UnknownError
	require.ErrorAs(t, err, &unknown)
	assert.EqualError(t, err, `unknown VM backend "qemo": allowed qemu, vz; did you mean qemu?`)
	assert.Error(t, Check("xen"))
	assert.NoError(t, Check(VZ))

	b, err := New("", Options{})
	require.NoError(t, err)
	assert.Equal(t, Default(), b.Name(), "empty is this machine's default")
	want := QEMU
	if runtime.GOOS == "darwin" && runtime.GOARCH == "arm64" {
		want = VZ
	}
	assert.Equal(t, want, Default())
}

func TestNotApplicable(t *testing.T) {
	assert.Empty(t, NotApplicable(QEMU), "qemu runs anywhere")
	if runtime.GOOS != "darwin" || runtime.GOARCH != "arm64" {
		assert.Contains(t, NotApplicable(VZ), "runs on darwin/arm64 only")
	}
}

func TestAttachAsksTheBackendThatWroteTheState(t *testing.T) {
	_, err := Attach(context.Background(), Options{}, t.TempDir())
	assert.ErrorContains(t, err, "no VM was started there")

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "vm.json"), []byte(`{"info": {"backend": "xen"}}`), 0o644))
	_, err = Attach(context.Background(), Options{}, dir)
	assert.ErrorContains(t, err, `unknown VM backend "xen"`)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "vm.json"), []byte(`{"version": 1, "info": {"backend": "qemu", "pid": 0}}`), 0o644))
	_, err = Attach(context.Background(), Options{}, dir)
	require.Error(t, err, "a qemu VM that is not running")
	assert.NotContains(t, err.Error(), "vz", "qemu's state is qemu's to read")
}
