// Package image builds qoslab's guest images: a Linux kernel and an initramfs
// whose /init is the qoslab agent, from a recipe (vmimages/linux-microvm.yaml),
// into an image store that hv backends boot from.
package image

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"

	"github.com/qoslab/qoslab/internal/suggest"
	"go.yaml.in/yaml/v3"

	"github.com/qoslab/qoslab/internal/inputfile"
)

// The default recipe. vmimages/linux-microvm.yaml is an identical copy (a test
// checks it): go:embed cannot reach outside this package's directory.
//
//go:embed linux-microvm.yaml
var defaultRecipe []byte

// defaultRecipeName is the file name of the embedded default recipe.
const defaultRecipeName = "linux-microvm.yaml"

// arches are the architectures an image can be built for.
var arches = []string{"amd64", "arm64"}

// Kernel sources.
const (
	sourceHost   = "host"
	sourcePath   = "path"
	sourceDebian = "debian"
)

// sourceNames are the kernel sources a recipe may name.
var sourceNames = []string{sourceHost, sourcePath, sourceDebian}

// Recipe says how to build an image.
type Recipe struct {
	Name        string            `yaml:"name" json:"name"`
	Arch        string            `yaml:"arch" json:"arch"`
	Kernel      KernelSpec        `yaml:"kernel" json:"kernel"`
	Modules     []string          `yaml:"modules" json:"modules"`
	Cmdline     string            `yaml:"cmdline" json:"cmdline"`
	ArchCmdline map[string]string `yaml:"arch_cmdline" json:"arch_cmdline,omitempty"`

	// File is where the recipe was read from ("" for the embedded default);
	// relative kernel paths are relative to its directory.
	File string `yaml:"-" json:"file,omitempty"`
}

// KernelSpec says where the kernel and its modules come from.
type KernelSpec struct {
	Source     string `yaml:"source" json:"source"`                     // host, path, debian
	Path       string `yaml:"path" json:"path,omitempty"`               // source path: the kernel image
	ModulesDir string `yaml:"modules_dir" json:"modules_dir,omitempty"` // source path: lib/modules/<version>
	Package    string `yaml:"package" json:"package,omitempty"`         // source debian: default linux-image-<arch>
	// Mirror and Suite (source debian) name the Debian archive the kernel
	// is fetched from when the cache lacks it: else QOSLAB_DEBIAN_MIRROR,
	// else this machine's apt sources. Suite defaults to stable.
	Mirror string `yaml:"mirror" json:"mirror,omitempty"`
	Suite  string `yaml:"suite" json:"suite,omitempty"`
}

// DefaultRecipe returns the embedded default recipe (vmimages/linux-microvm.yaml).
func DefaultRecipe() Recipe {
	r, err := parseRecipe(defaultRecipe, defaultRecipeName)
	if err != nil {
		panic("image: the embedded default recipe is invalid: " + err.Error())
	}
	return r
}

// defaultRecipeBytes returns the text of the embedded default recipe.
func defaultRecipeBytes() []byte { return bytes.Clone(defaultRecipe) }

// loadRecipe reads and checks a recipe file.
func loadRecipe(path string) (Recipe, error) {
	b, err := inputfile.Read("recipe "+path, path, "a YAML recipe")
	if err != nil {
		return Recipe{}, err
	}
	r, err := parseRecipe(b, path)
	if err != nil {
		return Recipe{}, err
	}
	if abs, err := filepath.Abs(path); err == nil {
		r.File = abs
	} else {
		r.File = path
	}
	return r, nil
}

func parseRecipe(b []byte, name string) (Recipe, error) {
	var r Recipe
	where := "recipe"
	if name != "" {
		where = "recipe " + name
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return r, fmt.Errorf("%s: %w", where, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return r, fmt.Errorf("%s: empty", where)
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return r, fmt.Errorf("%s: line %d: want a mapping of keys (%s), not %s", where, top.Line,
			strings.Join(yamlKeys(reflect.TypeOf(r)), ", "), kindName(top))
	}
	if err := checkKeys(top, reflect.TypeOf(r), ""); err != nil {
		return r, fmt.Errorf("%s: %w", where, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&r); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		msg = strings.ReplaceAll(strings.TrimPrefix(msg, "unmarshal errors:\n  "), "\n  ", "; ")
		return r, fmt.Errorf("%s: %s", where, msg)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return r, fmt.Errorf("%s: more than one YAML document", where)
	}
	if err := r.Check(); err != nil {
		return r, fmt.Errorf("%s: %w", where, err)
	}
	return r, nil
}

// checkKeys rejects keys that t has no field for, naming the key, its line
// and the keys allowed there.
func checkKeys(n *yaml.Node, t reflect.Type, path string) error {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil // the decoder reports the type error
		}
		allowed := yamlKeys(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Tag == "!!merge" {
				return fmt.Errorf("line %d: merge keys (<<) are not supported", k.Line)
			}
			f, ok := fieldByYAMLKey(t, k.Value)
			if !ok {
				msg := fmt.Sprintf("line %d: unknown key %q", k.Line, joinPath(path, k.Value))
				if s := suggest.Closest(k.Value, allowed); s != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", s)
				}
				where := "at the top level"
				if path != "" {
					where = "under " + path
				}
				return fmt.Errorf("%s; allowed %s: %s", msg, where, strings.Join(allowed, ", "))
			}
			if err := checkKeys(v, f.Type, joinPath(path, k.Value)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		if path == "arch_cmdline" {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				if !contains(arches, k.Value) {
					return fmt.Errorf("line %d: unknown key %q under arch_cmdline; allowed: %s", k.Line, k.Value, strings.Join(arches, ", "))
				}
			}
		}
	}
	return nil
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func yamlKeys(t reflect.Type) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		if k := yamlKey(t.Field(i)); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

func yamlKey(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
	if tag == "-" {
		return ""
	}
	if tag == "" {
		return strings.ToLower(f.Name)
	}
	return tag
}

func fieldByYAMLKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); yamlKey(f) == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("the value %q", n.Value)
	}
	return "something else"
}

var (
	nameRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	moduleRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	debPkgRE = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+$`)
)

// Check reports the first thing wrong with the recipe.
func (r Recipe) Check() error {
	if r.Name == "" {
		return errors.New("name is missing (it names the image in the store, e.g. name: linux)")
	}
	if !nameRE.MatchString(r.Name) || len(r.Name) > 64 {
		return fmt.Errorf("name %q: use letters, digits, '.', '_' and '-' (it is a directory name), at most 64 characters", r.Name)
	}
	if err := checkArch(r.Arch); err != nil {
		return err
	}
	k := r.Kernel
	switch k.Source {
	case "":
		return fmt.Errorf("kernel.source is missing; allowed: %s", strings.Join(sourceNames, ", "))
	case sourceHost, sourceDebian:
		if k.Path != "" || k.ModulesDir != "" {
			return fmt.Errorf("kernel.path and kernel.modules_dir are for kernel.source: path, not %s", k.Source)
		}
	case sourcePath:
		if k.Path == "" {
			return errors.New("kernel.source path needs kernel.path (the kernel image: a bzImage for amd64, an Image or Image.gz for arm64)")
		}
		if k.ModulesDir == "" && len(r.Modules) > 0 {
			return fmt.Errorf("kernel.source path with modules (%s) needs kernel.modules_dir (the kernel's lib/modules/<version>)", strings.Join(r.Modules, ", "))
		}
	default:
		return fmt.Errorf("kernel.source %q: allowed: %s", k.Source, strings.Join(sourceNames, ", "))
	}
	if k.Package != "" && k.Source != sourceDebian {
		return fmt.Errorf("kernel.package is for kernel.source: debian, not %s", k.Source)
	}
	if k.Package != "" && !debPkgRE.MatchString(k.Package) {
		return fmt.Errorf("kernel.package %q is not a Debian package name", k.Package)
	}
	for _, m := range r.Modules {
		if !moduleRE.MatchString(m) {
			return fmt.Errorf("module %q: a module name has only letters, digits, '_' and '-' (no path, no .ko)", m)
		}
	}
	if strings.ContainsAny(r.Cmdline, "\n\r\x00") {
		return errors.New("cmdline: one line, please")
	}
	for a, c := range r.ArchCmdline {
		if err := checkArch(a); err != nil {
			return fmt.Errorf("arch_cmdline: %w", err)
		}
		if strings.ContainsAny(c, "\n\r\x00") {
			return fmt.Errorf("arch_cmdline.%s: one line, please", a)
		}
	}
	return nil
}

// checkArch accepts amd64 and arm64.
func checkArch(arch string) error {
	if arch == "" {
		return fmt.Errorf("arch is missing; allowed: %s", strings.Join(arches, ", "))
	}
	if !contains(arches, arch) {
		return fmt.Errorf("arch %q: allowed: %s", arch, strings.Join(arches, ", "))
	}
	return nil
}

// CmdlineFor is the kernel command line for arch: cmdline, then arch_cmdline[arch].
func (r Recipe) CmdlineFor(arch string) string {
	return strings.Join(strings.Fields(r.Cmdline+" "+r.ArchCmdline[arch]), " ")
}

// PackageFor is the Debian package the kernel comes from for arch.
func (r Recipe) PackageFor(arch string) string {
	if r.Kernel.Package != "" {
		return r.Kernel.Package
	}
	return "linux-image-" + arch
}

// ImageName is the name an image of r built for arch gets in the store: the
// recipe's name for its own arch, <name>-<arch> for another.
func (r Recipe) ImageName(arch string) string {
	if arch == "" || arch == r.Arch {
		return r.Name
	}
	return r.Name + "-" + arch
}

// resolve makes p absolute, relative to the recipe file's directory.
func (r Recipe) resolve(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	if strings.HasPrefix(p, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, p[2:])
		}
	}
	base := "."
	if r.File != "" {
		base = filepath.Dir(r.File)
	}
	if abs, err := filepath.Abs(filepath.Join(base, p)); err == nil {
		return abs
	}
	return filepath.Join(base, p)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
