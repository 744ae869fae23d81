package image

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/qoslab/qoslab/internal/suggest"
)

// Where a module's dependencies came from.
const (
	depsFromModulesDep = "modules.dep"
	depsFromModinfo    = ".modinfo"
)

// Module is one kernel module to load.
type Module struct {
	Name    string   `json:"name"`              // canonical: '-' spelled '_'
	File    string   `json:"file"`              // relative to the modules directory, e.g. kernel/drivers/virtio/virtio.ko
	Depends []string `json:"depends,omitempty"` // direct dependencies, canonical names
	// Compression is how File is compressed (xz, zst, gz; "" for a plain
	// .ko): the image holds the module decompressed, as GuestFile.
	Compression string `json:"compression,omitempty"`
}

// GuestFile is where the module goes under the guest's modules directory:
// File without its compression suffix. The build decompresses modules
// because a kernel decompresses at most one format itself, and only when
// built with CONFIG_MODULE_DECOMPRESS (Debian 12's has no compressed
// modules and no decompressor; Debian 13's has xz only), while a plain .ko
// loads on every kernel, and costs the guest no decompression at boot.
func (m Module) GuestFile() string {
	if m.Compression == "" {
		return m.File
	}
	return strings.TrimSuffix(m.File, "."+m.Compression)
}

// maxModuleBytes bounds a module decompressed: the largest in Debian's
// kernels are a few tens of MiB.
const maxModuleBytes = 256 << 20

// readModule reads the module file at path, decompressed when its name says
// it is compressed (.ko.xz, .ko.zst, .ko.gz).
func readModule(path string) ([]byte, error) {
	b, err := os.ReadFile(path) //nolint:gosec // G304: a module of the kernel the recipe or the kernel cache names
	if err != nil {
		return nil, err
	}
	_, comp, _ := moduleFileName(path)
	var r io.Reader
	switch comp {
	case "":
		return b, nil
	case "xz":
		// One stream, LZMA2 with a CRC32 check, as the kernel's build
		// compresses modules; unxz checks it.
		out, err := unxz(context.Background(), b, 4*len(b), maxModuleBytes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return out, nil
	case "zst":
		zr, err := zstd.NewReader(bytes.NewReader(b), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxModuleBytes))
		if err != nil {
			return nil, fmt.Errorf("%s: zstd: %w", path, err)
		}
		defer zr.Close()
		r = zr
	case "gz":
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s: gzip: %w", path, err)
		}
		r = zr
	}
	out, err := io.ReadAll(io.LimitReader(r, maxModuleBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", path, map[string]string{"zst": "zstd", "gz": "gzip"}[comp], err)
	}
	if len(out) > maxModuleBytes {
		return nil, fmt.Errorf("%s: more than %d MiB decompressed", path, maxModuleBytes>>20)
	}
	return out, nil
}

// ModuleSet is a resolved list of modules in load order.
type ModuleSet struct {
	Dir           string   `json:"dir"`            // the modules directory (lib/modules/<version>)
	KernelVersion string   `json:"kernel_version"` // the version the modules are for
	DepsFrom      string   `json:"deps_from"`      // modules.dep or .modinfo
	Load          []Module `json:"load"`           // dependencies first, each once
	// Builtin are modules asked for (or depended on) that the kernel has
	// built in: satisfied without a file.
	Builtin []string `json:"builtin,omitempty"`
}

// moduleName is the canonical spelling of a module name: the kernel treats
// '-' and '_' alike and names modules with '_'.
func moduleName(s string) string { return strings.ReplaceAll(s, "-", "_") }

// moduleFileName strips .ko and compression suffixes from a file name.
func moduleFileName(file string) (name, compression string, ok bool) {
	base := filepath.Base(file)
	for _, c := range []string{"", ".xz", ".zst", ".gz"} {
		if strings.HasSuffix(base, ".ko"+c) {
			return moduleName(strings.TrimSuffix(base, ".ko"+c)), strings.TrimPrefix(c, "."), true
		}
	}
	return "", "", false
}

// resolveModuleSet finds names (and what they depend on) in the modules
// directory dir of kernel version, for arch, and orders them so that every
// module comes after its dependencies. Dependencies come from modules.dep
// where dir has one, else from each module's .modinfo "depends=" (a Debian
// package's extract has no modules.dep: depmod makes it at install). Modules
// the kernel has built in (modules.builtin) are recorded, not loaded.
func resolveModuleSet(dir, version, arch string, names []string) (ModuleSet, error) {
	set := ModuleSet{Dir: dir, KernelVersion: version, DepsFrom: depsFromModinfo}
	if len(names) == 0 {
		return set, nil
	}
	if dir == "" {
		return set, fmt.Errorf("modules %s: the kernel has no modules directory", strings.Join(names, ", "))
	}
	idx, err := indexModules(dir)
	if err != nil {
		return set, err
	}
	if idx.dep != nil {
		set.DepsFrom = depsFromModulesDep
	}
	r := resolver{idx: idx, dir: dir, version: version, arch: arch, state: map[string]int{}}
	for _, n := range names {
		if err := r.visit(moduleName(n), nil); err != nil {
			return set, err
		}
	}
	set.Load = r.order
	set.Builtin = r.builtinOrder
	return set, nil
}

type moduleIndex struct {
	files   map[string]string   // canonical name -> file relative to dir
	dep     map[string][]string // from modules.dep: canonical name -> dependencies' names; nil without modules.dep
	builtin map[string]bool     // from modules.builtin; nil without it
}

// indexModules indexes the modules under dir: from modules.dep when there
// is one, else from the module files found there; and which modules are
// built in, from modules.builtin.
func indexModules(dir string) (*moduleIndex, error) {
	idx := &moduleIndex{files: map[string]string{}}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("kernel modules: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("kernel modules: %s is not a directory", dir)
	}
	if err := idx.readBuiltin(dir); err != nil {
		return nil, err
	}
	if f, err := os.Open(filepath.Join(dir, "modules.dep")); err == nil { //nolint:gosec // G304: the kernel's module directory, which the user's recipe or the kernel cache names
		defer func() { _ = f.Close() }() // read only
		if err := idx.readDep(dir, f); err != nil {
			return nil, fmt.Errorf("kernel modules: %s: %w", filepath.Join(dir, "modules.dep"), err)
		}
		return idx, nil
	}
	if err := idx.findFiles(dir); err != nil {
		return nil, fmt.Errorf("kernel modules: %w", err)
	}
	return idx, nil
}

// readBuiltin reads modules.builtin, when dir has one.
func (idx *moduleIndex) readBuiltin(dir string) error {
	f, err := os.Open(filepath.Join(dir, "modules.builtin")) //nolint:gosec // G304: as in indexModules
	if err != nil {
		return nil // none: nothing is known to be built in
	}
	defer func() { _ = f.Close() }() // read only
	idx.builtin = map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if n, _, ok := moduleFileName(strings.TrimSpace(sc.Text())); ok {
			idx.builtin[n] = true
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("kernel modules: %w", err)
	}
	return nil
}

// readDep reads modules.dep: each module's file and its dependencies.
func (idx *moduleIndex) readDep(dir string, r io.Reader) error {
	idx.dep = map[string][]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		file, deps, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		name, _, ok := moduleFileName(file)
		if !ok {
			continue
		}
		file = relModule(dir, file)
		if _, dup := idx.files[name]; !dup {
			idx.files[name] = file
		}
		var dn []string
		for _, d := range strings.Fields(deps) {
			if n, _, ok := moduleFileName(d); ok {
				dn = append(dn, n)
				if _, dup := idx.files[n]; !dup {
					idx.files[n] = relModule(dir, d)
				}
			}
		}
		idx.dep[name] = dn
	}
	return sc.Err()
}

// findFiles indexes the module files under dir, for a kernel without
// modules.dep. depmod's default search order puts updates/ first;
// otherwise the first in lexical order wins.
func (idx *moduleIndex) findFiles(dir string) error {
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		if _, _, ok := moduleFileName(p); ok {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			found = append(found, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.SliceStable(found, func(i, j int) bool {
		ui, uj := strings.HasPrefix(found[i], "updates/"), strings.HasPrefix(found[j], "updates/")
		if ui != uj {
			return ui
		}
		return found[i] < found[j]
	})
	for _, f := range found {
		n, _, _ := moduleFileName(f)
		if _, dup := idx.files[n]; !dup {
			idx.files[n] = f
		}
	}
	return nil
}

// relModule makes a modules.dep path relative to dir (old depmods wrote
// absolute paths).
func relModule(dir, p string) string {
	if filepath.IsAbs(p) {
		if rel, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
		if i := strings.Index(p, "/kernel/"); i >= 0 {
			return p[i+1:]
		}
	}
	return filepath.ToSlash(p)
}

type resolver struct {
	idx          *moduleIndex
	dir, version string
	arch         string
	state        map[string]int // 1 visiting, 2 done
	order        []Module
	builtinOrder []string
}

func (r *resolver) visit(name string, chain []string) error {
	switch r.state[name] {
	case 2:
		return nil
	case 1:
		i := 0
		for i < len(chain) && chain[i] != name {
			i++
		}
		cyc := append(append([]string{}, chain[i:]...), name)
		return fmt.Errorf("modules for kernel %s: dependency cycle %s", r.version, strings.Join(cyc, " -> "))
	}
	if r.idx.builtin[name] {
		r.state[name] = 2
		r.builtinOrder = append(r.builtinOrder, name)
		return nil
	}
	file, ok := r.idx.files[name]
	if !ok {
		return r.notFound(name, chain)
	}
	r.state[name] = 1
	_, comp, _ := moduleFileName(file)
	info, err := readModinfo(filepath.Join(r.dir, file), r.arch)
	if err != nil {
		return fmt.Errorf("module %s: %w", name, err)
	}
	if v := firstWord([]byte(info["vermagic"])); v != "" && r.version != "" && r.version != "unknown" && v != r.version {
		return fmt.Errorf("module %s (%s) is built for kernel %s, not %s: the modules directory does not belong to this kernel", name, filepath.Join(r.dir, file), v, r.version)
	}
	var deps []string
	if r.idx.dep != nil {
		deps = r.idx.dep[name]
	} else {
		for _, d := range strings.Split(info["depends"], ",") {
			if d = strings.TrimSpace(d); d != "" {
				deps = append(deps, moduleName(d))
			}
		}
	}
	for _, d := range deps {
		if err := r.visit(d, append(chain, name)); err != nil {
			return err
		}
	}
	r.state[name] = 2
	r.order = append(r.order, Module{Name: name, File: file, Depends: deps, Compression: comp})
	return nil
}

func (r *resolver) notFound(name string, chain []string) error {
	what := "module " + name
	if len(chain) > 0 {
		what += " (needed by " + chain[len(chain)-1] + ")"
	}
	msg := fmt.Sprintf("%s does not exist for kernel %s: no %s.ko in %s", what, r.version, name, r.dir)
	if r.idx.builtin != nil {
		msg += " and it is not in modules.builtin"
	} else {
		msg += " (which has no modules.builtin to say what is built in)"
	}
	cands := make([]string, 0, len(r.idx.files)+len(r.idx.builtin))
	for n := range r.idx.files {
		cands = append(cands, n)
	}
	for n := range r.idx.builtin {
		cands = append(cands, n)
	}
	sort.Strings(cands)
	if s := suggest.Closest(name, cands); s != "" {
		msg += fmt.Sprintf("; did you mean %s?", s)
	}
	return errors.New(msg)
}

// readModinfo reads a module's .modinfo section: NUL-separated key=value
// pairs. It checks the file (decompressed, if it is compressed) is an ELF
// relocatable for arch.
func readModinfo(path, arch string) (map[string]string, error) {
	b, err := readModule(path)
	if err != nil {
		return nil, err
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s is not a kernel module: %w", path, err)
	}
	defer f.Close()
	if f.Type != elf.ET_REL {
		return nil, fmt.Errorf("%s is not a kernel module: an ELF %s, not a relocatable object", path, f.Type)
	}
	if want, ok := elfMachine[arch]; ok && f.Machine != want {
		return nil, fmt.Errorf("%s is a module for %s, but the image is for %s", path, machineArch(f.Machine), arch)
	}
	s := f.Section(".modinfo")
	if s == nil {
		return nil, fmt.Errorf("%s is not a kernel module: no .modinfo section", path)
	}
	mi, err := s.Data()
	if err != nil {
		return nil, fmt.Errorf("%s: .modinfo: %w", path, err)
	}
	return parseModinfo(mi), nil
}

func parseModinfo(b []byte) map[string]string {
	info := map[string]string{}
	for _, kv := range bytes.Split(b, []byte{0}) {
		k, v, ok := strings.Cut(string(kv), "=")
		if !ok || k == "" {
			continue
		}
		if _, seen := info[k]; seen {
			info[k] += "," + v // alias=, parm= repeat; depends= does not
			continue
		}
		info[k] = v
	}
	return info
}

var elfMachine = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

func machineArch(m elf.Machine) string {
	for a, mm := range elfMachine {
		if mm == m {
			return a
		}
	}
	return m.String()
}
