package image

import (
	stdgzip "compress/gzip"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cavaliergopher/cpio"
	"github.com/klauspost/compress/gzip"

	"github.com/qoslab/qoslab/internal/guestchan"
	"github.com/qoslab/qoslab/internal/guestinit"
)

// guestScratchDir is the tmpfs in the guest that file sinks write in.
const guestScratchDir = "/scratch"

// guestListen are the agent's channels in the guest.
var guestListen = []string{
	"virtio-port:" + guestchan.PortName,
	fmt.Sprintf("vsock:%d", guestchan.VsockPort),
}

// entryTime is every initramfs entry's mtime, so that the same inputs give
// the same bytes.
var entryTime = time.Unix(0, 0)

// fileEntry is one thing in the initramfs.
type fileEntry struct {
	name         string // without a leading '/'
	mode         cpio.FileMode
	data         []byte // contents, or
	src          string // a file on the host to copy
	size         int64
	major, minor int // char devices
}

// checkAgent checks that path is a static Linux ELF executable for arch: it
// runs as /init with no dynamic loader and no libc.
func checkAgent(path, arch string) error {
	f, err := elf.Open(path)
	if err != nil {
		if _, serr := os.Stat(path); serr != nil {
			return fmt.Errorf("agent: %w", serr)
		}
		return fmt.Errorf("agent %s is not a Linux executable (%w): build it with `make cross` (bin/linux-%s/qoslab-agent)", path, err, arch)
	}
	defer f.Close()
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return fmt.Errorf("agent %s is an ELF %s, not an executable", path, f.Type)
	}
	if want := elfMachine[arch]; f.Machine != want {
		return fmt.Errorf("agent %s is for %s, but the image is for %s: use bin/linux-%s/qoslab-agent (`make cross`)", path, machineArch(f.Machine), arch, arch)
	}
	if f.Class != elf.ELFCLASS64 {
		return fmt.Errorf("agent %s is a 32-bit executable; want 64-bit %s", path, arch)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			interp, _ := io.ReadAll(io.LimitReader(p.Open(), 256))
			return fmt.Errorf("agent %s is dynamically linked (interpreter %s): the initramfs has no libc; build it with CGO_ENABLED=0", path, strings.TrimRight(string(interp), "\x00"))
		}
	}
	return nil
}

// AgentVersion is what the agent binary says about its build when the
// caller does not know its version: "devel-<revision>[-dirty]" from the Go
// build information, or "".
func AgentVersion(path string) string {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return ""
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			return v
		}
		return ""
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "devel-" + rev
}

// initEntries lists the initramfs: the agent as /init, its configuration,
// the modules and the empty directories the agent mounts on.
func initEntries(agentPath string, mods ModuleSet, cfg guestinit.Config) ([]fileEntry, error) {
	cfgJSON, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, err
	}
	cfgJSON = append(cfgJSON, '\n')
	ents := []fileEntry{
		{name: "init", mode: 0o755, src: agentPath},
		{name: strings.TrimPrefix(guestchan.ConfigPath, "/"), mode: 0o644, data: cfgJSON},
		// The kernel opens /dev/console for /init's stdin, stdout and
		// stderr before devtmpfs is mounted: without this node the agent
		// starts with none.
		{name: "dev/console", mode: cpio.TypeChar | 0o600, major: 5, minor: 1},
		// Where no console exists at that point (Virtualization.framework's
		// is the virtio console, a module), fds 0-2 are closed and the Go
		// runtime opens /dev/null in their place before init's first line
		// runs; without the node it throws "cannot open standard fds", init
		// dies and the kernel panics.
		{name: "dev/null", mode: cpio.TypeChar | 0o666, major: 1, minor: 3},
	}
	for _, d := range []string{"proc", "sys", "dev", "tmp", "etc", strings.TrimPrefix(guestScratchDir, "/")} {
		mode := cpio.FileMode(0o755)
		if d == "tmp" {
			mode = 0o1777
		}
		ents = append(ents, fileEntry{name: d, mode: cpio.TypeDir | mode})
	}
	for _, m := range mods.Load {
		e := fileEntry{name: guestModulePath(mods.KernelVersion, m)[1:], mode: 0o644, src: filepath.Join(mods.Dir, filepath.FromSlash(m.File))}
		if m.Compression != "" {
			if e.data, err = readModule(e.src); err != nil {
				return nil, err
			}
			e.src = ""
		}
		ents = append(ents, e)
	}
	for i := range ents {
		e := &ents[i]
		switch {
		case e.src != "":
			fi, err := os.Stat(e.src)
			if err != nil {
				return nil, err
			}
			if !fi.Mode().IsRegular() {
				return nil, fmt.Errorf("%s is not a regular file", e.src)
			}
			e.size = fi.Size()
		default:
			e.size = int64(len(e.data))
		}
	}
	return withParents(ents), nil
}

// guestModulePath is where module m goes in the initramfs (decompressed).
func guestModulePath(version string, m Module) string {
	return "/lib/modules/" + version + "/" + m.GuestFile()
}

// withParents adds every missing parent directory and sorts by name, which
// puts each directory before what is in it (the kernel's unpacker does not
// create parents).
func withParents(ents []fileEntry) []fileEntry {
	have := map[string]bool{}
	for _, e := range ents {
		have[e.name] = true
	}
	for _, e := range ents {
		for d := path.Dir(e.name); d != "." && d != "/" && !have[d]; d = path.Dir(d) {
			have[d] = true
			ents = append(ents, fileEntry{name: d, mode: cpio.TypeDir | 0o755})
		}
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].name < ents[j].name })
	return ents
}

// writeInitramfs writes ents as a gzip'd newc cpio archive and returns the
// SHA-256 and size of the archive before compression. The output depends only
// on the entries: fixed mtimes, owner root, inodes in order, no gzip name or
// time.
//
// The level is the default, not 9: klauspost/compress v1.18.1 (retracted)
// writes invalid deflate at level 9 for long runs of one byte value, which a
// static binary has; the kernel then stops unpacking half way
// ("Initramfs unpacking failed"). verifyInitramfs catches any such stream.
func writeInitramfs(ctx context.Context, w io.Writer, ents []fileEntry) (rawSum string, rawSize int64, err error) {
	zw, err := gzip.NewWriterLevel(w, gzip.DefaultCompression)
	if err != nil {
		return "", 0, err
	}
	h := sha256.New()
	raw := &countWriter{w: io.MultiWriter(zw, h)}
	if err := writeCpio(ctx, raw, ents); err != nil {
		return "", 0, err
	}
	if err := zw.Close(); err != nil {
		return "", 0, err
	}
	return hexSum(h), raw.n, nil
}

// verifyInitramfs decompresses the initramfs with another gzip implementation
// (the standard library's) and checks it gives the archive that was written.
func verifyInitramfs(path, rawSum string, rawSize int64) error {
	f, err := os.Open(path) //nolint:gosec // G304: the initramfs just written into the image being built
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := stdgzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("written initramfs is not valid gzip: %w", err)
	}
	h := sha256.New()
	n, err := io.Copy(h, zr)
	if err != nil {
		return fmt.Errorf("written initramfs does not decompress (the kernel would stop unpacking it): %w", err)
	}
	if got := hexSum(h); got != rawSum || n != rawSize {
		return fmt.Errorf("written initramfs decompresses to other bytes than were written (%d bytes %s, want %d bytes %s)", n, short(got), rawSize, short(rawSum))
	}
	return nil
}

func writeCpio(ctx context.Context, zw io.Writer, ents []fileEntry) error {
	cw := cpio.NewWriter(zw)
	for i, e := range ents {
		if err := ctx.Err(); err != nil {
			return err
		}
		ino := int64(i + 1)
		if e.mode&cpio.ModeType == cpio.TypeChar {
			// The library cannot set a device number (rdevmajor/rdevminor).
			if err := cw.Flush(); err != nil {
				return err
			}
			if err := writeNewcNode(zw, e, ino); err != nil {
				return err
			}
			continue
		}
		links := 1
		if e.mode.IsDir() {
			links = 2
		}
		h := &cpio.Header{Name: e.name, Mode: e.mode, Size: e.size, Links: links, ModTime: entryTime, Inode: ino}
		if e.mode.IsDir() {
			h.Size = 0
		}
		if err := cw.WriteHeader(h); err != nil {
			return fmt.Errorf("initramfs %s: %w", e.name, err)
		}
		if h.Size == 0 {
			continue
		}
		if e.src == "" {
			if _, err := cw.Write(e.data); err != nil {
				return fmt.Errorf("initramfs %s: %w", e.name, err)
			}
			continue
		}
		if err := copyFileTo(ctx, cw, e.src, e.size); err != nil {
			return fmt.Errorf("initramfs %s: %w", e.name, err)
		}
	}
	return cw.Close()
}

// writeNewcNode writes one newc header for a device node, which has no data.
func writeNewcNode(w io.Writer, e fileEntry, ino int64) error {
	name := e.name + "\x00"
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		ino, uint32(e.mode), 0, 0, 1, entryTime.Unix(), 0, 0, 0, e.major, e.minor, len(name), 0)
	pad := (4 - (len(hdr)+len(name))%4) % 4
	_, err := io.WriteString(w, hdr+name+strings.Repeat("\x00", pad))
	return err
}

// copyFileTo copies exactly size bytes of src to w.
func copyFileTo(ctx context.Context, w io.Writer, src string, size int64) error {
	f, err := os.Open(src) //nolint:gosec // G304: a file the initramfs takes from the build's inputs
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := io.Copy(w, ctxReader{ctx, io.LimitReader(f, size)})
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("%s changed while it was read (%d bytes, expected %d)", src, n, size)
	}
	return nil
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
