package codec

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFileSinkWritesReadsBackAndRemoves(t *testing.T) {
	dir := t.TempDir()
	spec := SinkSpec{Kind: SinkFile, Path: dir}
	require.NoError(t, spec.Check(4, 1<<20))
	s, err := spec.Open(2, 1<<20, "out-2-*.zst")
	require.NoError(t, err)
	assert.Equal(t, dir, filepath.Dir(s.Name()))
	assert.Regexp(t, `out-2-.*\.zst$`, s.Name())

	data := generated(t, 300_000, 0, 1, DefaultRatio)
	_, err = s.Write(data[:1000])
	require.NoError(t, err)
	_, err = s.Write(data[1000:])
	require.NoError(t, err)
	require.NoError(t, s.Sync())
	assert.Equal(t, int64(len(data)), s.Written())

	rc, err := s.ReadBack()
	require.NoError(t, err)
	back, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	assert.True(t, bytes.Equal(data, back))

	require.NoError(t, s.Close())
	assert.NoFileExists(t, s.Name(), "a file sink's output is scratch")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "no probe or output file may be left behind")
}

func TestFileSinkDirectoryErrors(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(notDir, []byte("x"), 0o600))
	cases := []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "nope"), "does not exist"},
		{"not a directory", notDir, "is not a directory"},
		{"no path", "", "needs a path"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := SinkSpec{Kind: SinkFile, Path: c.path}
			err := spec.Check(1, 1)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Contains(t, err.Error(), c.path)
			_, err = spec.Open(0, 1, "x-*")
			assert.Error(t, err, "Open must refuse too")
		})
	}
}

func TestFileSinkUnwritableDirectory(t *testing.T) {
	var dir string
	if os.Geteuid() == 0 {
		// Root ignores permission bits; a read-only mount stops it.
		dir = mountTmpfs(t, 1<<20, true)
	} else {
		dir = t.TempDir()
		require.NoError(t, os.Chmod(dir, 0o500))
		t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
	}
	err := SinkSpec{Kind: SinkFile, Path: dir}.Check(1, 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), dir)
	assert.Contains(t, err.Error(), "not writable")
}

func TestFileSinkFullDiskNamesPathAndBytes(t *testing.T) {
	const fsSize = 256 << 10
	dir := mountTmpfs(t, fsSize, false)
	s, err := SinkSpec{Kind: SinkFile, Path: dir}.Open(0, 0, "full-*")
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })

	chunk := make([]byte, 64<<10)
	var werr error
	for i := 0; i < 2*fsSize/len(chunk) && werr == nil; i++ {
		_, werr = s.Write(chunk)
	}
	require.Error(t, werr, "writing twice the file system's size must fail")
	assert.ErrorIs(t, werr, syscall.ENOSPC)
	assert.Contains(t, werr.Error(), s.Name())
	m := regexp.MustCompile(`after (\d+) bytes written`).FindStringSubmatch(werr.Error())
	require.NotNil(t, m, "error must say how many bytes went in: %v", werr)
	n, err := strconv.ParseInt(m[1], 10, 64)
	require.NoError(t, err)
	assert.Equal(t, s.Written(), n)
	assert.Positive(t, n)
	assert.LessOrEqual(t, n, int64(fsSize))
}

func TestNullSink(t *testing.T) {
	spec := SinkSpec{Kind: SinkNull}
	require.NoError(t, spec.Check(64, 1<<40), "a null sink takes anything")
	s, err := spec.Open(3, 0, "")
	require.NoError(t, err)
	_, err = s.Write(make([]byte, 1234))
	require.NoError(t, err)
	_, err = s.Write(make([]byte, 10))
	require.NoError(t, err)
	assert.Equal(t, int64(1244), s.Written())
	assert.NoError(t, s.Sync())
	_, err = s.ReadBack()
	assert.ErrorIs(t, err, errNotKept)
	assert.NoError(t, s.Close())
}

func TestSinkSpecValidate(t *testing.T) {
	err := SinkSpec{Kind: "tape"}.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"tape"`)
	assert.Contains(t, err.Error(), "file, block, null")
	assert.ErrorContains(t, SinkSpec{Kind: SinkBlock}.Validate(), "block device")
}

func TestBlockSinkRefusesWhatIsNotABlockDevice(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "disk.img")
	require.NoError(t, os.WriteFile(regular, make([]byte, 4096), 0o600))
	cases := []struct {
		name, path, want string
	}{
		{"regular file", regular, "is a regular file, not a block device"},
		{"directory", dir, "is a directory, not a block device"},
		{"character device", os.DevNull, "is a character device, not a block device"},
		{"missing", filepath.Join(dir, "nope"), "no such file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := SinkSpec{Kind: SinkBlock, Path: c.path}
			err := spec.Check(1, 4096)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Contains(t, err.Error(), c.path)
			_, err = spec.Open(0, 4096, "")
			assert.Error(t, err, "Open must refuse too")
		})
	}
	before, err := os.ReadFile(regular)
	require.NoError(t, err)
	assert.Equal(t, make([]byte, 4096), before, "a refused path is not written")
}

func TestCheckRegions(t *testing.T) {
	cases := []struct {
		name       string
		deviceSize int64
		regions    int
		regionSize int64
		ok         bool
	}{
		{"exactly fits", 4 << 20, 4, 1 << 20, true},
		{"room to spare", 10 << 20, 2, 1 << 20, true},
		{"one byte short", 4<<20 - 1, 4, 1 << 20, false},
		{"empty device", 0, 1, 1, false},
		{"overflowing product", 1 << 40, 1 << 20, 1 << 62, false},
		{"no regions", 1 << 20, 0, 1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkRegions("/dev/fake", c.deviceSize, c.regions, c.regionSize)
			if c.ok {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), "/dev/fake")
		})
	}
	err := checkRegions("/dev/fake", 3<<20, 4, 1<<20)
	require.Error(t, err)
	assert.Contains(t, err.Error(), strconv.Itoa(3<<20), "names the device's size")
	assert.Contains(t, err.Error(), strconv.Itoa(4<<20), "names what was needed")
}

// memDevice is a fake block device in memory.
type memDevice struct {
	data   []byte
	syncs  int
	closed bool
}

func (d *memDevice) WriteAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > int64(len(d.data)) {
		n := copy(d.data[off:], p)
		return n, syscall.ENOSPC
	}
	return copy(d.data[off:], p), nil
}

func (d *memDevice) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(d.data)) {
		return 0, io.EOF
	}
	n := copy(p, d.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (d *memDevice) Sync() error  { d.syncs++; return nil }
func (d *memDevice) Close() error { d.closed = true; return nil }

func TestRegionSinksKeepToTheirRegions(t *testing.T) {
	const regionSize = 1000
	dev := &memDevice{data: bytes.Repeat([]byte{0xee}, 3*regionSize)}
	var sinks []*regionSink
	for i := range 3 {
		sinks = append(sinks, newRegionSink(dev, "/dev/fake", i, regionSize))
	}
	// Interleaved writes, as threads would make them.
	for round := range 3 {
		for i, s := range sinks {
			_, err := s.Write(bytes.Repeat([]byte{byte('a' + i)}, 100+round))
			require.NoError(t, err)
		}
	}
	for i, s := range sinks {
		assert.Equal(t, int64(303), s.Written())
		start := i * regionSize
		assert.Equal(t, bytes.Repeat([]byte{byte('a' + i)}, 303), dev.data[start:start+303], "region %d", i)
		assert.Equal(t, bytes.Repeat([]byte{0xee}, regionSize-303), dev.data[start+303:start+regionSize], "rest of region %d untouched", i)
		assert.Contains(t, s.Name(), "region "+strconv.Itoa(i))

		rc, err := s.ReadBack()
		require.NoError(t, err)
		back, err := io.ReadAll(rc)
		require.NoError(t, err)
		assert.Equal(t, bytes.Repeat([]byte{byte('a' + i)}, 303), back, "read back region %d", i)
	}
	require.NoError(t, sinks[1].Sync())
	assert.Equal(t, 1, dev.syncs)
	require.NoError(t, sinks[1].Close())
	assert.True(t, dev.closed)
}

func TestRegionSinkRefusesToOverflowIntoTheNext(t *testing.T) {
	dev := &memDevice{data: make([]byte, 2000)}
	first := newRegionSink(dev, "/dev/fake", 0, 1000)
	_, err := first.Write(make([]byte, 900))
	require.NoError(t, err)
	n, err := first.Write(bytes.Repeat([]byte{1}, 200))
	require.Error(t, err)
	assert.Equal(t, 100, n, "fills the region and stops")
	assert.ErrorIs(t, err, syscall.ENOSPC)
	assert.Contains(t, err.Error(), "/dev/fake region 0")
	assert.Contains(t, err.Error(), "after 1000 bytes written")
	assert.Equal(t, make([]byte, 1000), dev.data[1000:], "the next region is untouched")
}

func TestRegionSinkDeviceFull(t *testing.T) {
	// The device is smaller than the region claims: the device's ENOSPC
	// must come back with the path and the count.
	dev := &memDevice{data: make([]byte, 1500)}
	s := newRegionSink(dev, "/dev/fake", 1, 1000)
	_, err := s.Write(make([]byte, 800))
	require.Error(t, err)
	assert.True(t, errors.Is(err, syscall.ENOSPC))
	assert.Contains(t, err.Error(), "/dev/fake region 1")
	assert.Contains(t, err.Error(), "after 500 bytes written")
}

// A rooted file sink writes inside its root, and a symlink already in the
// root that points outside cannot lead a write out: the open is refused and
// nothing appears outside.
func TestRootedFileSinkStaysInside(t *testing.T) {
	scratch, outside := t.TempDir(), t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(scratch, "sub"), 0o755))
	ok := SinkSpec{Kind: SinkFile, Path: filepath.Join(scratch, "sub"), Root: scratch}
	s, err := ok.Open(0, 0, "out-*.zst")
	require.NoError(t, err)
	_, err = s.Write([]byte("data"))
	require.NoError(t, err)
	require.NoError(t, s.Sync())
	assert.True(t, strings.HasPrefix(s.Name(), filepath.Join(scratch, "sub")+string(filepath.Separator)), s.Name())
	rc, err := s.ReadBack()
	require.NoError(t, err)
	b, err := io.ReadAll(rc)
	require.NoError(t, err)
	rc.Close()
	assert.Equal(t, "data", string(b))
	require.NoError(t, s.Close())
	left, err := os.ReadDir(filepath.Join(scratch, "sub"))
	require.NoError(t, err)
	assert.Empty(t, left, "Close removes the file")

	require.NoError(t, os.Symlink(outside, filepath.Join(scratch, "link")))
	escape := SinkSpec{Kind: SinkFile, Path: filepath.Join(scratch, "link"), Root: scratch}
	_, err = escape.Open(0, 0, "out-*.zst")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "symlinks out of it are refused")
	dotdot := SinkSpec{Kind: SinkFile, Path: filepath.Join(scratch, ".."), Root: scratch}
	_, err = dotdot.Open(0, 0, "out-*.zst")
	assert.ErrorContains(t, err, "is outside")
	out, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, out, "nothing written outside the root")
}
