// Package version says which build of qoslab and of its agent protocol this is.
package version

import "runtime/debug"

// Version is set at build time (-ldflags "-X github.com/qoslab/qoslab/internal/version.Version=v0.1.0");
// otherwise it comes from the module's build info.
var Version = ""

// Protocol is the agent protocol this build speaks. A peer with another major
// is refused; minors only add fields.
const (
	ProtocolMajor = 1
	ProtocolMinor = 3 // 1: telemetry_interval_ms and Telemetry events; 2: duration_ns; 3: ThreadRecord.cpu_ns, RunRequest.trace and Result.trace_ns
)

// String returns the build's version, "devel" when nothing better is known.
func String() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			if len(rev) > 12 {
				rev = rev[:12]
			}
			if dirty {
				rev += "-dirty"
			}
			return "devel-" + rev
		}
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			return bi.Main.Version
		}
	}
	return "devel"
}
