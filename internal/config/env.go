package config

import "path/filepath"

// The environment variables qoslab reads besides its settings' own (QOSLAB_
// and the flag's key: Settings.Apply reads those). Each is read here,
// through Settings.Env (which tests set), and handed down as a value: no
// other package of the controller reads the process's environment.
// docs/environment.md lists every variable with its meaning.
const (
	// DebianMirrorEnv names the Debian mirror a kernel is fetched from when
	// the recipe names none.
	DebianMirrorEnv = "QOSLAB_DEBIAN_MIRROR"
	// ConfigHomeEnv, CacheHomeEnv and StateHomeEnv are the XDG base
	// directories of qoslab's config file, caches (images, kernels, failed
	// KVM probes) and named VMs; HomeEnv is where they are when unset.
	ConfigHomeEnv = "XDG_CONFIG_HOME"
	CacheHomeEnv  = "XDG_CACHE_HOME"
	StateHomeEnv  = "XDG_STATE_HOME"
	HomeEnv       = "HOME"
	// CargoHomeEnv is cargo's home, whose bin directory is searched for
	// vhost-device-vsock when it is not on PATH (else ~/.cargo/bin).
	CargoHomeEnv = "CARGO_HOME"
	// NoColorEnv set to anything, or TermEnv "dumb", turns colour off.
	NoColorEnv = "NO_COLOR"
	TermEnv    = "TERM"
)

// Value is a value read from the environment and the variable it was
// read from (the variable's name even when it is unset), so that a
// message can name where a value came from, as Sources does for flags.
type Value struct {
	Value, Source string
}

// CargoBin is cargo's bin directory, where `cargo install` puts programs,
// as env says: $CARGO_HOME/bin, else ~/.cargo/bin; "" when neither
// CARGO_HOME nor HOME is set.
func CargoBin(env func(string) string) string {
	if h := env(CargoHomeEnv); h != "" {
		return filepath.Join(h, "bin")
	}
	if h := env(HomeEnv); h != "" {
		return filepath.Join(h, ".cargo", "bin")
	}
	return ""
}

// Variable reads the environment variable name, one of this file's.
func (s *Settings) Variable(name string) Value {
	return Value{Value: s.Env(name), Source: name}
}
