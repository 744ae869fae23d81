// Package cli is qoslab's command line: one file per command, flags bound to
// viper (config file and QOSLAB_* environment), work done on Options structs.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"golang.org/x/term"
)

// IOStreams are where a command reads and writes.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// Progress is true when ErrOut is a terminal: live progress goes there.
	Progress bool
}

// SystemIO returns the process's streams.
func SystemIO() *IOStreams {
	return &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, Progress: term.IsTerminal(int(os.Stderr.Fd()))}
}

// Factory carries what every command needs.
type Factory struct {
	IO     *IOStreams
	Config *viper.Viper
	// Env reads the environment (os.Getenv in production).
	Env func(string) string
	// keys are the configuration keys the commands bound, for refusing unknown ones.
	keys map[string]bool
}

// NewFactory returns a factory over io with a fresh configuration.
func NewFactory(io *IOStreams) *Factory {
	v := viper.New()
	v.SetEnvPrefix("QOSLAB")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_", "-", "_"))
	v.AutomaticEnv()
	return &Factory{IO: io, Config: v, Env: os.Getenv, keys: map[string]bool{}}
}

// UsageError is a mistake in how qoslab was called: exit status 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usageErrorf(format string, a ...any) error {
	return &UsageError{Err: fmt.Errorf(format, a...)}
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

// bindFlags binds each of cmd's local flags to the key section.NAME, so the
// value comes from the flag when given, else QOSLAB_SECTION_NAME, else the
// config file, else the flag's default.
func (f *Factory) bindFlags(section string, flags *pflag.FlagSet) {
	flags.VisitAll(func(fl *pflag.Flag) {
		if fl.Name == "help" || fl.Name == "config" {
			return
		}
		key := fl.Name
		if section != "" {
			key = section + "." + fl.Name
		}
		f.keys[key] = true
		_ = f.Config.BindPFlag(key, fl)
	})
}

// configFile picks the configuration file: --config, else ./qoslab.yaml, else
// $XDG_CONFIG_HOME/qoslab/config.yaml (~/.config when XDG_CONFIG_HOME is unset).
// An explicit file must exist; the others are optional.
func configFile(explicit string, env func(string) string) (string, error) {
	if explicit != "" {
		if _, err := os.Stat(explicit); err != nil {
			return "", usageErrorf("config file %s: %w", explicit, err)
		}
		return explicit, nil
	}
	if _, err := os.Stat("qoslab.yaml"); err == nil {
		return "qoslab.yaml", nil
	}
	dir := env("XDG_CONFIG_HOME")
	if dir == "" {
		if home := env("HOME"); home != "" {
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

// loadConfig reads the configuration file into v, refusing keys that no
// command knows (a typo would otherwise be silently ignored).
func loadConfig(v *viper.Viper, explicit string, env func(string) string, known map[string]bool) (string, error) {
	path, err := configFile(explicit, env)
	if err != nil || path == "" {
		return "", err
	}
	file := viper.New()
	file.SetConfigFile(path)
	file.SetConfigType("yaml")
	if err := file.ReadInConfig(); err != nil {
		return path, usageErrorf("config file %s: %w", path, err)
	}
	var unknown []string
	for _, k := range file.AllKeys() {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		keys := make([]string, 0, len(known))
		for k := range known {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return path, usageErrorf("config file %s: unknown keys %s; known keys: %s", path, strings.Join(unknown, ", "), strings.Join(keys, ", "))
	}
	if err := v.MergeConfigMap(file.AllSettings()); err != nil {
		return path, fmt.Errorf("config file %s: %w", path, err)
	}
	return path, nil
}
