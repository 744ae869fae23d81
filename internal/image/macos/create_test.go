package macos

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"howett.net/plist"

	"github.com/qoslab/qoslab/internal/hv/vz"
)

// fakeFramework stands in for Virtualization.framework.
type fakeFramework struct {
	host     string
	req      requirements
	reqErr   error
	limits   vz.Limits
	latest   string
	install  func(ctx context.Context, t installTarget, progress func(float64)) error
	installs []installTarget
}

func newFakeFramework(t *testing.T) *fakeFramework {
	return &fakeFramework{
		host: "14.4.1",
		req: requirements{Supported: true, MinCPUs: 2, MinMemory: 4 << 30,
			HardwareModel: dataRepresentation(t, map[string]any{"PlatformVersion": 2, "DataRepresentationVersion": 1})},
		limits: vz.Limits{MinCPUs: 1, MaxCPUs: 10, MinMemoryBytes: 1 << 30, MaxMemoryBytes: 32 << 30},
	}
}

// dataRepresentation is a binary property list, as the framework writes for
// hardware models and machine identifiers.
func dataRepresentation(t *testing.T, v map[string]any) []byte {
	t.Helper()
	b, err := plist.Marshal(v, plist.BinaryFormat)
	require.NoError(t, err)
	return b
}

func (f *fakeFramework) HostVersion() string { return f.host }
func (f *fakeFramework) LatestRestoreImageURL(context.Context) (string, error) {
	return f.latest, nil
}
func (f *fakeFramework) Requirements(context.Context, string) (requirements, error) {
	return f.req, f.reqErr
}
func (f *fakeFramework) Limits() vz.Limits { return f.limits }

func (f *fakeFramework) NewMachineIdentifier() ([]byte, error) {
	return plist.Marshal(map[string]any{"ECID": uint64(0x1234)}, plist.BinaryFormat)
}

// Install does what the real one leaves behind: the aux storage.
func (f *fakeFramework) Install(ctx context.Context, t installTarget, progress func(float64)) error {
	f.installs = append(f.installs, t)
	if f.install != nil {
		return f.install(ctx, t, progress)
	}
	progress(0.5)
	if err := os.WriteFile(t.Aux, []byte("aux storage"), 0o600); err != nil {
		return err
	}
	progress(1)
	return nil
}

func createOptions(t *testing.T, fw Framework) CreateOptions {
	dir := t.TempDir()
	return CreateOptions{
		IPSW:        writeFakeIPSW(t, dir),
		Bundle:      filepath.Join(dir, "store", "sonoma"),
		DiskBytes:   64 << 30,
		CPUs:        4,
		MemoryBytes: 8 << 30,
		Framework:   fw,
		FreeSpace:   plenty,
		Now:         func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) },
	}
}

// leftovers lists what is in dir besides keep.
func leftovers(t *testing.T, dir string, keep ...string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	var out []string
outer:
	for _, e := range ents {
		for _, k := range keep {
			if e.Name() == k {
				continue outer
			}
		}
		out = append(out, e.Name())
	}
	return out
}

func TestCreate(t *testing.T) {
	fw := newFakeFramework(t)
	opts := createOptions(t, fw)
	var fractions []float64
	opts.OnProgress = func(p Progress) { fractions = append(fractions, p.Fraction()) }

	b, err := Create(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, []float64{0.5, 1}, fractions)
	require.Len(t, fw.installs, 1)
	in := fw.installs[0]
	assert.Equal(t, 4, in.CPUs)
	assert.Equal(t, uint64(8<<30), in.MemoryBytes)
	assert.Equal(t, opts.IPSW, in.IPSW)
	assert.Equal(t, fw.req.HardwareModel, in.HardwareModel)
	assert.NotEmpty(t, in.MachineIdentifier)
	assert.NotEqual(t, filepath.Join(opts.Bundle, vz.DiskFile), in.Disk, "the installer works in a staged bundle")

	loaded, err := vz.OpenBundle(opts.Bundle)
	require.NoError(t, err)
	assert.Equal(t, b.Config, loaded.Config)
	c := loaded.Config
	assert.Equal(t, vz.GuestMacOS, c.Kind)
	assert.Equal(t, 4, c.CPUs)
	assert.Equal(t, 8192, c.MemoryMiB)
	assert.Equal(t, int64(64<<30), c.DiskBytes)
	assert.Equal(t, 2, c.MinCPUs)
	assert.Equal(t, 4096, c.MinMemoryMiB)
	assert.Equal(t, &vz.InstallSource{IPSW: opts.IPSW, Build: "23E224", OSVersion: "14.4.1"}, c.InstalledFrom)
	assert.Equal(t, time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), c.CreatedAt)
	assert.Equal(t, fw.req.HardwareModel, loaded.HardwareModel)
	assert.Empty(t, leftovers(t, filepath.Dir(opts.Bundle), "sonoma"), "no staging directory is left")

	n, err := allocatedSize(filepath.Join(opts.Bundle, vz.DiskFile))
	require.NoError(t, err)
	assert.Less(t, n, int64(1<<20), "the disk is sparse: 64 GiB long, nothing allocated")
}

func TestCreateDefaults(t *testing.T) {
	fw := newFakeFramework(t)
	fw.req.MinCPUs = 6
	opts := createOptions(t, fw)
	opts.CPUs, opts.MemoryBytes = 0, 0
	plan, err := planCreate(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, 6, plan.CPUs, "the image's minimum wins over the default")
	assert.Equal(t, uint64(defaultMemoryBytes), plan.MemoryBytes)
	assert.Equal(t, uint64(64<<30)+diskFreeMargin, plan.NeedFree)

	fw.limits.MaxMemoryBytes = 6 << 30
	plan, err = planCreate(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, uint64(6<<30), plan.MemoryBytes, "the default is capped at the host's limit")
}

func TestCreateRefusesBeforeInstalling(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*CreateOptions, *fakeFramework)
		want   []string
	}{
		{"too few CPUs", func(o *CreateOptions, _ *fakeFramework) { o.CPUs = 1 }, []string{"--cpus 1", "allowed 2..10"}},
		{"too many CPUs", func(o *CreateOptions, _ *fakeFramework) { o.CPUs = 11 }, []string{"--cpus 11", "allowed 2..10", "at most 10"}},
		{"too little memory", func(o *CreateOptions, _ *fakeFramework) { o.MemoryBytes = 2 << 30 },
			[]string{"--memory 2.0 GiB", "allowed 4.0 GiB..32.0 GiB"}},
		{"too much memory", func(o *CreateOptions, _ *fakeFramework) { o.MemoryBytes = 64 << 30 }, []string{"--memory 64.0 GiB"}},
		{"memory not whole MiB", func(o *CreateOptions, _ *fakeFramework) { o.MemoryBytes = 8<<30 + 5 }, []string{"whole number of MiB"}},
		{"disk too small", func(o *CreateOptions, _ *fakeFramework) { o.DiskBytes = 16 << 30 }, []string{"--disk 16.0 GiB", "at least 32.0 GiB"}},
		{"not enough free space", func(o *CreateOptions, _ *fakeFramework) {
			o.FreeSpace = func(string) (uint64, error) { return 40 << 30, nil }
		}, []string{"needs 66.0 GiB free", "only 40.0 GiB is free"}},
		{"not a restore image", func(o *CreateOptions, _ *fakeFramework) {
			o.IPSW = filepath.Join(filepath.Dir(o.IPSW), "x.txt")
			must(os.WriteFile(o.IPSW, []byte("x"), 0o644))
		}, []string{"x.txt", "not a macOS restore image"}},
		{"image too new for the host", func(_ *CreateOptions, f *fakeFramework) { f.host = "13.6"; f.req = requirements{} },
			[]string{"macOS 14.4.1 (23E224)", "cannot run on this Mac", "macOS 13.6", "macOS 14 or newer host"}},
		{"no supported hardware model", func(_ *CreateOptions, f *fakeFramework) { f.req = requirements{} },
			[]string{"macOS 14.4.1 (23E224)", "host macOS 14.4.1", "supports none of its hardware models"}},
		{"framework cannot load it", func(_ *CreateOptions, f *fakeFramework) { f.reqErr = errors.New("invalid restore image") },
			[]string{"Virtualization.framework", "invalid restore image"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fw := newFakeFramework(t)
			opts := createOptions(t, fw)
			tc.change(&opts, fw)
			_, err := Create(context.Background(), opts)
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Empty(t, fw.installs, "nothing long started")
			assert.NoDirExists(t, opts.Bundle)
			assert.Empty(t, leftovers(t, filepath.Dir(opts.Bundle)))
		})
	}
}

func TestCreateNeverTouchesAnExistingBundle(t *testing.T) {
	fw := newFakeFramework(t)
	opts := createOptions(t, fw)
	require.NoError(t, os.MkdirAll(opts.Bundle, 0o755))
	marker := filepath.Join(opts.Bundle, vz.DiskFile)
	require.NoError(t, os.WriteFile(marker, []byte("the user's guest"), 0o644))

	_, err := Create(context.Background(), opts)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "already exists")
	assert.Contains(t, err.Error(), "choose another name")
	assert.Empty(t, fw.installs)
	b, err := os.ReadFile(marker)
	require.NoError(t, err)
	assert.Equal(t, "the user's guest", string(b))
}

func TestCreateFailedInstallLeavesNothing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		install func(ctx context.Context, t installTarget, progress func(float64)) error
		cancel  bool
		want    string
	}{
		{"installer error", func(context.Context, installTarget, func(float64)) error { return errors.New("restore failed") }, false, "restore failed"},
		{"cancelled", func(ctx context.Context, _ installTarget, progress func(float64)) error {
			progress(0.1)
			<-ctx.Done()
			return ctx.Err()
		}, true, "cancelled; nothing was kept"},
		{"no aux storage", func(context.Context, installTarget, func(float64)) error { return nil }, false, "aux.img"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fw := newFakeFramework(t)
			fw.install = tc.install
			opts := createOptions(t, fw)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				opts.OnProgress = func(Progress) { cancel() }
			}
			_, err := Create(ctx, opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NoDirExists(t, opts.Bundle)
			assert.Empty(t, leftovers(t, filepath.Dir(opts.Bundle)))
		})
	}
}

func TestCreateRaceForTheName(t *testing.T) {
	fw := newFakeFramework(t)
	opts := createOptions(t, fw)
	fw.install = func(ctx context.Context, tg installTarget, progress func(float64)) error {
		// Another create finished first.
		require.NoError(t, os.MkdirAll(filepath.Join(opts.Bundle, "theirs"), 0o755))
		return os.WriteFile(tg.Aux, []byte("aux"), 0o600)
	}
	_, err := Create(context.Background(), opts)
	require.Error(t, err)
	assert.DirExists(t, filepath.Join(opts.Bundle, "theirs"), "the other bundle is untouched")
}

func TestCreateWithoutAMac(t *testing.T) {
	if runtime.GOOS == "darwin" && runtime.GOARCH == "arm64" {
		t.Skip("this host may be a Mac")
	}
	opts := createOptions(t, nil)
	_, err := Create(context.Background(), opts)
	require.Error(t, err)
	assert.ErrorIs(t, err, errNeedsMac)
	assert.Contains(t, err.Error(), "creating macOS images needs a Mac (macOS 13+, Apple silicon)")
}

func TestFetch(t *testing.T) {
	ipsw, err := os.ReadFile(writeFakeIPSW(t, t.TempDir()))
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.HandleFunc("/2024/UniversalMac_14.4.1_23E224_Restore.ipsw", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"abc"`)
		_, _ = w.Write(ipsw)
	})
	mux.HandleFunc("/error.ipsw", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("<html>sign in first</html>"))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	fw := newFakeFramework(t)
	fw.latest = srv.URL + "/2024/UniversalMac_14.4.1_23E224_Restore.ipsw"
	dir := t.TempDir()
	res, err := Fetch(context.Background(), FetchOptions{IPSW: LatestIPSW, Dir: dir, Framework: fw, FreeSpace: plenty})
	require.NoError(t, err)
	assert.Equal(t, fw.latest, res.URL)
	assert.Equal(t, filepath.Join(dir, "UniversalMac_14.4.1_23E224_Restore.ipsw"), res.Download.Path)
	assert.Equal(t, "23E224", res.Image.Build)

	_, err = Fetch(context.Background(), FetchOptions{IPSW: srv.URL + "/error.ipsw", Dir: dir, FreeSpace: plenty})
	require.Error(t, err)
	assert.ErrorIs(t, err, errNotRestoreImage)
	assert.Contains(t, err.Error(), "download was deleted")
	assert.NoFileExists(t, filepath.Join(dir, "error.ipsw"))
}

func TestFetchLatestWithoutAMac(t *testing.T) {
	if runtime.GOOS == "darwin" && runtime.GOARCH == "arm64" {
		t.Skip("this host may be a Mac")
	}
	_, err := Fetch(context.Background(), FetchOptions{IPSW: LatestIPSW, Dir: t.TempDir()})
	require.Error(t, err)
	assert.ErrorIs(t, err, errNeedsMac)
	assert.Contains(t, err.Error(), "--ipsw latest")
	assert.Contains(t, err.Error(), "pass the restore image's URL instead")
}
