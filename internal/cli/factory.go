// Package cli is qoslab's command line: each command turns its flags (and
// the config file and QOSLAB_* environment behind them) into an Options
// struct, hands it to the package that does the work, and prints.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"golang.org/x/term"

	"github.com/qoslab/qoslab/internal/suggest"
)

// IOStreams are where a command reads and writes.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// Progress is true when ErrOut is a terminal: live progress goes there;
	// otherwise long commands print a line per step.
	Progress bool
}

// SystemIO returns the process's streams.
func SystemIO() *IOStreams {
	return &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, Progress: term.IsTerminal(int(os.Stderr.Fd()))}
}

// Factory carries what every command needs.
type Factory struct {
	IO *IOStreams
	// Env reads the environment (os.Getenv in production).
	Env func(string) string
	// ConfigPath is --config; empty looks for ./qoslab.yaml, then
	// $XDG_CONFIG_HOME/qoslab/config.yaml.
	ConfigPath string
	// keys are the configuration keys the commands bound, for refusing
	// unknown ones.
	keys   map[string]bool
	config *fileConfig
}

// NewFactory returns a factory over io and the process environment.
func NewFactory(io *IOStreams) *Factory {
	return &Factory{IO: io, Env: os.Getenv, keys: map[string]bool{}}
}

// UsageError is a mistake in how qoslab was called: exit status 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usageErrorf(format string, a ...any) error {
	return &UsageError{Err: fmt.Errorf(format, a...)}
}

func usageError(err error) error {
	if err == nil {
		return nil
	}
	return &UsageError{Err: err}
}

// IsUsageError tells whether err came from how qoslab was called.
func IsUsageError(err error) bool {
	var u *UsageError
	if errors.As(err, &u) {
		return true
	}
	// cobra's own complaints about commands and arguments.
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "flag needs an argument", "invalid argument", "accepts ", "requires at least"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// sharedKeys are settings every command that has them reads from one
// top-level key (and one QOSLAB_* variable): where the agent, the results
// and the images are.
var sharedKeys = map[string]bool{"agent": true, "results": true, "image-store": true}

// configKey is the key of a command's flag in the config file: the flag's
// name under the command's section, or top level for shared settings.
func configKey(section, flag string) string {
	if sharedKeys[flag] || section == "" {
		return flag
	}
	return section + "." + flag
}

// envName is the environment variable of a config key: QOSLAB_BENCH_LOOPS.
func envName(key string) string {
	return "QOSLAB_" + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(key))
}

// sources names, for each flag whose value did not come from the command
// line, where it came from: a bad value is reported there.
type sources map[string]string

// name is how an error names the setting of flag: --flag, the environment
// variable, or the config file's key.
func (s sources) name(flag string) string {
	if n, ok := s[flag]; ok {
		return n
	}
	return "--" + flag
}

// configure registers cmd's flags under section and, before cmd runs, gives
// every flag the user did not set its value from the environment or the
// config file, recording where each came from in *src.
func (f *Factory) configure(cmd *cobra.Command, section string, src *sources) {
	visit(cmd, func(fl *pflag.Flag) { f.keys[configKey(section, fl.Name)] = true })
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		s, err := f.apply(cmd, section)
		*src = s
		return err
	}
}

// visit calls fn on the flags of cmd that settings can set.
func visit(cmd *cobra.Command, fn func(*pflag.Flag)) {
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		if fl.Name != "help" && fl.Name != "config" {
			fn(fl)
		}
	})
}

// apply sets the flags of cmd the command line left alone: from QOSLAB_*
// variables first, then the config file.
func (f *Factory) apply(cmd *cobra.Command, section string) (sources, error) {
	cfg, err := f.loadConfig()
	if err != nil {
		return nil, err
	}
	src := sources{}
	var errs []error
	visit(cmd, func(fl *pflag.Flag) {
		if fl.Changed {
			return
		}
		key := configKey(section, fl.Name)
		var where, value string
		if v := f.Env(envName(key)); v != "" {
			where, value = envName(key), v
		} else if v, ok := cfg.get(key); ok {
			where, value = fmt.Sprintf("%s in %s", key, cfg.path), v
		} else {
			return
		}
		src[fl.Name] = where
		if err := fl.Value.Set(value); err != nil {
			errs = append(errs, usageErrorf("%s %q: want %s", where, value, typeText(fl.Value.Type())))
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

// fileConfig is the config file as read: its keys, flattened with dots.
type fileConfig struct {
	path   string
	values map[string]any
}

func (c *fileConfig) get(key string) (string, bool) {
	if c == nil {
		return "", false
	}
	v, ok := c.values[key]
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

// loadConfig reads the config file once: --config, else ./qoslab.yaml,
// else $XDG_CONFIG_HOME/qoslab/config.yaml (~/.config when unset). An
// explicit file must exist; the others are optional.
func (f *Factory) loadConfig() (*fileConfig, error) {
	if f.config != nil {
		return f.config, nil
	}
	path, err := f.configFile()
	if err != nil || path == "" {
		f.config = &fileConfig{}
		return f.config, err
	}
	v := viper.New()
	v.SetConfigFile(path)
	v.SetConfigType("yaml")
	if err := v.ReadInConfig(); err != nil {
		return nil, usageErrorf("config file %s: %w", path, err)
	}
	f.config = &fileConfig{path: path, values: map[string]any{}}
	for _, k := range v.AllKeys() {
		f.config.values[k] = v.Get(k)
	}
	return f.config, nil
}

func (f *Factory) configFile() (string, error) {
	if f.ConfigPath != "" {
		if _, err := os.Stat(f.ConfigPath); err != nil {
			return "", usageErrorf("config file %s: %w", f.ConfigPath, err)
		}
		return f.ConfigPath, nil
	}
	if _, err := os.Stat("qoslab.yaml"); err == nil {
		return "qoslab.yaml", nil
	}
	dir := f.Env("XDG_CONFIG_HOME")
	if dir == "" {
		if home := f.Env("HOME"); home != "" {
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

// checkConfigKeys refuses keys no command knows: a typo would otherwise be
// silently ignored.
func (f *Factory) checkConfigKeys() error {
	cfg, err := f.loadConfig()
	if err != nil || cfg.path == "" {
		return err
	}
	known := keysOf(f.keys)
	var unknown, guesses []string
	for k := range cfg.values {
		if f.keys[k] {
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
	msg := fmt.Sprintf("config file %s: unknown keys %s", cfg.path, strings.Join(unknown, ", "))
	if len(guesses) > 0 {
		msg += " (did you mean " + strings.Join(guesses, ", ") + "?)"
	}
	return usageErrorf("%s; known keys: %s", msg, strings.Join(known, ", "))
}

func keysOf(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
