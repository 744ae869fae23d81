// Package config layers qoslab's settings for its commands: a flag the user
// typed wins over a QOSLAB_* environment variable, which wins over the
// config file, which wins over the flag's default.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/qoslab/qoslab/internal/inputfile"
	"github.com/qoslab/qoslab/internal/suggest"
)

// Settings are the environment and the config file behind every command's
// flags. A flag's key is its name under its command's section
// (bench.loops); shared keys are top level whatever the command
// (results). Its variable is the key in capitals with '.' and '-' as '_',
// after QOSLAB_ (QOSLAB_BENCH_LOOPS).
type Settings struct {
	// Env reads the environment (os.Getenv in production).
	Env func(string) string
	// Path is the config file given with --config; empty looks for
	// ./qoslab.yaml, then $XDG_CONFIG_HOME/qoslab/config.yaml.
	Path string

	shared map[string]bool
	keys   map[string]bool
	file   *file
}

// New returns settings over env whose shared keys are shared.
func New(env func(string) string, shared ...string) *Settings {
	s := &Settings{Env: env, shared: map[string]bool{}, keys: map[string]bool{}}
	for _, k := range shared {
		s.shared[k] = true
	}
	return s
}

// Key is the config key of flag in section.
func (s *Settings) Key(section, flag string) string {
	if s.shared[flag] || section == "" {
		return flag
	}
	return section + "." + flag
}

// envName is the environment variable of a config key.
func envName(key string) string {
	return "QOSLAB_" + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(key))
}

// Sources name, for each flag whose value did not come from the command
// line, where it came from, so that a bad value is reported there.
type Sources map[string]string

// Name is how an error names the setting of flag: --flag, the environment
// variable, or the config file's key and path.
func (s Sources) Name(flag string) string {
	if n, ok := s[flag]; ok {
		return n
	}
	return "--" + flag
}

// settable calls fn on the flags of fs that settings may set.
func settable(fs *pflag.FlagSet, fn func(*pflag.Flag)) {
	fs.VisitAll(func(fl *pflag.Flag) {
		if fl.Name != "help" && fl.Name != "config" {
			fn(fl)
		}
	})
}

// Register records the keys of fs's flags under section, for CheckKeys.
func (s *Settings) Register(fs *pflag.FlagSet, section string) {
	settable(fs, func(fl *pflag.Flag) { s.keys[s.Key(section, fl.Name)] = true })
}

// Apply sets the flags of fs the command line left alone, from the
// environment first, then the config file, and says where each came from.
// A value the flag cannot take is an error naming the variable or the
// file and key.
func (s *Settings) Apply(fs *pflag.FlagSet, section string) (Sources, error) {
	f, err := s.load()
	if err != nil {
		return nil, err
	}
	src := Sources{}
	var errs []error
	settable(fs, func(fl *pflag.Flag) {
		if fl.Changed {
			return
		}
		key := s.Key(section, fl.Name)
		var where, value string
		if v := s.Env(envName(key)); v != "" {
			where, value = envName(key), v
		} else if v, ok := f.get(key); ok {
			where, value = fmt.Sprintf("%s in %s", key, f.path), v
		} else {
			return
		}
		src[fl.Name] = where
		if err := fl.Value.Set(value); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: want %s", where, value, typeText(fl.Value.Type())))
		}
	})
	return src, errors.Join(errs...)
}

func typeText(t string) string {
	switch t {
	case "int", "uint64":
		return "a whole number"
	case "float64":
		return "a number"
	case "bool":
		return "true or false"
	}
	return "a " + t
}

// CheckKeys refuses keys of the config file that no command registered:
// a typo would otherwise be ignored without a word.
func (s *Settings) CheckKeys() error {
	f, err := s.load()
	if err != nil || f.path == "" {
		return err
	}
	known := make([]string, 0, len(s.keys))
	for k := range s.keys {
		known = append(known, k)
	}
	sort.Strings(known)
	var unknown, guesses []string
	for k := range f.values {
		if s.keys[k] {
			continue
		}
		unknown = append(unknown, k)
		if g := suggest.Closest(k, known); g != "" {
			guesses = append(guesses, g+" for "+k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	sort.Strings(guesses)
	msg := fmt.Sprintf("config file %s: unknown keys %s", f.path, strings.Join(unknown, ", "))
	if len(guesses) > 0 {
		msg += " (did you mean " + strings.Join(guesses, ", ") + "?)"
	}
	return fmt.Errorf("%s; known keys: %s", msg, strings.Join(known, ", "))
}

// file is the config file as read: its keys, flattened with dots.
type file struct {
	path   string
	values map[string]any
}

// get is a key's value as a flag takes it: a YAML list as one
// comma-separated string.
func (f *file) get(key string) (string, bool) {
	v, ok := f.values[key]
	if !ok || v == nil {
		return "", false
	}
	if list, ok := v.([]any); ok {
		parts := make([]string, len(list))
		for i, x := range list {
			parts[i] = fmt.Sprint(x)
		}
		return strings.Join(parts, ","), true
	}
	return fmt.Sprint(v), true
}

// load reads the config file once. An explicit file must exist; the
// others are optional.
func (s *Settings) load() (*file, error) {
	if s.file != nil {
		return s.file, nil
	}
	path, err := s.find()
	if err != nil || path == "" {
		s.file = &file{}
		return s.file, err
	}
	b, err := inputfile.Read("config file "+path, path, "a YAML config file")
	if err != nil {
		return nil, err
	}
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(b)); err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	s.file = &file{path: path, values: map[string]any{}}
	for _, k := range v.AllKeys() {
		s.file.values[k] = v.Get(k)
	}
	return s.file, nil
}

func (s *Settings) find() (string, error) {
	if s.Path != "" {
		if _, err := os.Stat(s.Path); err != nil {
			return "", fmt.Errorf("config file %s: %w", s.Path, err)
		}
		return s.Path, nil
	}
	if _, err := os.Stat("qoslab.yaml"); err == nil {
		return "qoslab.yaml", nil
	}
	dir := s.Env(ConfigHomeEnv)
	if dir == "" {
		if home := s.Env(HomeEnv); home != "" {
			dir = filepath.Join(home, ".config")
		}
	}
	if dir != "" {
		p := filepath.Join(dir, "qoslab", "config.yaml")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", nil
}
