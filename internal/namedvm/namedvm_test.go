package namedvm

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// store is an empty store, with the named VMs given made as stopped VMs:
// a state directory whose hypervisor is gone.
func store(t *testing.T, names ...string) Store {
	t.Helper()
	s := Store{Home: t.TempDir()}
	for _, n := range names {
		require.NoError(t, os.MkdirAll(s.Dir(n), 0o755))
	}
	return s
}

func TestNames(t *testing.T) {
	assert.Empty(t, store(t).Names(), "no vms directory yet")
	s := store(t, "zeta", "alpha")
	require.NoError(t, os.WriteFile(filepath.Join(s.Home, "vms", "stray-file"), nil, 0o600))
	assert.Equal(t, []string{"alpha", "zeta"}, s.Names(), "directories only, sorted")
	assert.Equal(t, filepath.Join(s.Home, "vms", "alpha"), s.Dir("alpha"))
}

func TestAttachSaysWhyNot(t *testing.T) {
	ctx := context.Background()
	_, err := store(t).Attach(ctx, "dev")
	var none *noSuchVMError
	require.ErrorAs(t, err, &none)
	assert.EqualError(t, err, "no vm named dev: there are no named VMs; start one with `qoslab vm start dev`")

	s := store(t, "dev", "ci")
	_, err = s.Attach(ctx, "prod")
	assert.EqualError(t, err, "no vm named prod: the named VMs are ci, dev")

	_, err = s.Attach(ctx, "dev")
	var stopped *NotRunningError
	require.ErrorAs(t, err, &stopped)
	assert.Equal(t, "dev", stopped.Name)
	assert.ErrorContains(t, err, "vm dev is not running: ")
	assert.ErrorContains(t, err, "(start it with `qoslab vm start dev`)")
}

func TestCleanStoppedKeepsWhatTheVMIs(t *testing.T) {
	s := store(t, "dev")
	for _, f := range []string{"qmp.sock", "agent.sock", "qemu.pid", "vm.json", "disk.raw", "console.log"} {
		require.NoError(t, os.WriteFile(filepath.Join(s.Dir("dev"), f), nil, 0o600))
	}
	removed, err := s.CleanStopped("dev")
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"qmp.sock", "agent.sock", "qemu.pid"}, removed)
	left, err := os.ReadDir(s.Dir("dev"))
	require.NoError(t, err)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{"vm.json", "disk.raw", "console.log"}, names)
	_, err = s.CleanStopped("nope")
	assert.Error(t, err)
}

func TestDeleteStopped(t *testing.T) {
	ctx := context.Background()
	s := store(t, "dev")
	require.NoError(t, os.WriteFile(filepath.Join(s.Dir("dev"), "disk.raw"), []byte("x"), 0o600))
	require.NoError(t, s.Delete(ctx, "dev"))
	assert.NoDirExists(t, s.Dir("dev"))
	var none *noSuchVMError
	assert.ErrorAs(t, s.Delete(ctx, "dev"), &none, "gone")
}

func TestListStopped(t *testing.T) {
	assert.Equal(t, []State{}, store(t).List(context.Background()), "an empty list, not null, for --json")
	got := store(t, "b", "a").List(context.Background())
	assert.Equal(t, []State{{Name: "a"}, {Name: "b"}}, got)
}

func TestOpenConsole(t *testing.T) {
	s := store(t, "dev")
	_, err := s.OpenConsole("nope")
	var none *noSuchVMError
	assert.ErrorAs(t, err, &none)
	_, err = s.OpenConsole("dev")
	assert.EqualError(t, err, "vm dev has no console log yet (it never booted?)")
	require.NoError(t, os.WriteFile(filepath.Join(s.Dir("dev"), "console.log"), []byte("booted\n"), 0o600))
	f, err := s.OpenConsole("dev")
	require.NoError(t, err)
	defer f.Close()
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	assert.Equal(t, "booted\n", string(b))
}

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"dev", "ci-2", "A_b"} {
		assert.NoError(t, CheckName(ok), ok)
	}
	for _, bad := range []string{"", "a/b", "..", "a b", "é"} {
		assert.ErrorContains(t, CheckName(bad), "use letters, digits, '-' and '_' only", bad)
	}
}
