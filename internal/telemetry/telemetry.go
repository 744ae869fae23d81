// Package telemetry samples where threads ran, how fast the cores clocked
// and what power they drew while a cell runs, and defines the records kept in
// a run's telemetry.jsonl.
package telemetry

import (
	"fmt"
	"strings"
)

// SchemaVersion is written on every telemetry.jsonl line. Readers refuse an
// unknown major.
const SchemaVersion = "1.0"

// Views: whose eyes a sample was taken through. A VM cell is seen twice: by
// the agent inside the guest (ViewGuest) and by the controller on the host
// (ViewHost, including the VM's vCPU threads). A host cell is seen by the
// agent on the host (ViewHost).
const (
	ViewHost  = "host"
	ViewGuest = "guest"
)

// Samplers: which source a sample came from.
const (
	SamplerProc         = "proc"         // Linux /proc and /sys
	SamplerPowermetrics = "powermetrics" // macOS powermetrics cpu_power
)

// DefaultIntervalMs is the default sampling interval: the 0.1 s of
// powermetrics in [allocation] (docs/references.md).
const DefaultIntervalMs = 100

// Sample is one sampling instant's view of one machine. Fields a sampler
// cannot read are left out (nil or empty), never zeroed: a missing frequency
// is not 0 MHz.
type Sample struct {
	SchemaVersion string `json:"schema_version"`
	// Cell and Repeat are the cell run being measured, as in samples.jsonl
	// (Record.Cell, Sample.Repeat); empty between cells.
	Cell   string `json:"cell"`
	Repeat int    `json:"repeat"`
	// Target is the cell's target (host or vm); View is who looked.
	Target  string `json:"target"`
	View    string `json:"view"`
	Sampler string `json:"sampler"`
	// TNs is when the sample was taken, in ns since the cell run began, on
	// the sampling machine's monotonic clock (the guest's clock and the
	// host's differ by the cell's start-up latency).
	TNs int64 `json:"t_ns"`
	// IntervalNs is the time the sample's rates cover (since the previous
	// sample); 0 on a first sample, whose rates are unknown and left out.
	IntervalNs int64 `json:"interval_ns"`
	// CPUs is each online logical CPU.
	CPUs []CPU `json:"cpus,omitempty"`
	// Clusters are CPU clusters (macOS: E0, P0, P1...).
	Clusters []Cluster `json:"clusters,omitempty"`
	// PackageW is package power (Linux RAPL package energy over the
	// interval; macOS combined CPU power), CPUW the cores' alone.
	PackageW *float64 `json:"package_w,omitempty"`
	CPUW     *float64 `json:"cpu_w,omitempty"`
	// Threads are threads of interest: the measured workload threads, or,
	// in a host view of a VM cell, the VM's vCPU threads.
	Threads []Thread `json:"threads,omitempty"`
	// Notes say what could not be read and why (a CPU went offline, a
	// counter wrapped, a plist was garbled).
	Notes []string `json:"notes,omitempty"`
}

// CPU is one logical CPU in one sample.
type CPU struct {
	ID int `json:"id"`
	// Type is the core type: "P"/"E" (Apple perf levels, Intel cpu_core and
	// cpu_atom), or "capacity N" from cpu_capacity; "" when all are alike
	// or unknown.
	Type string `json:"type,omitempty"`
	// Busy is the share of the interval not idle, 0..1 (macOS: active
	// residency, 1 - idle ratio).
	Busy *float64 `json:"busy,omitempty"`
	MHz  *float64 `json:"mhz,omitempty"`
}

// Cluster is one CPU cluster in one sample (macOS).
type Cluster struct {
	Name  string   `json:"name"`
	Type  string   `json:"type,omitempty"` // P or E
	MHz   *float64 `json:"mhz,omitempty"`
	Busy  *float64 `json:"busy,omitempty"`
	Power *float64 `json:"power_w,omitempty"`
}

// Thread is one thread of interest in one sample.
type Thread struct {
	TID int `json:"tid"`
	// Role says what the thread is: "vcpu 0", "worker 1", "proc 3".
	Role string `json:"role"`
	// CPU is the CPU it last ran on; CPUs every CPU seen in the interval
	// where the sampler can tell.
	CPU int `json:"cpu"`
	// Busy is the thread's CPU time over the interval, as a share of one
	// CPU (0..1).
	Busy *float64 `json:"busy,omitempty"`
	// Policy is its scheduling policy and nice ("SCHED_OTHER nice=0").
	Policy string `json:"policy,omitempty"`
}

// Float returns a pointer to v, for the optional fields.
func Float(v float64) *float64 { return &v }

// CheckVersion refuses a schema version whose major this reader does not
// know.
func CheckVersion(v string) error {
	major, _, _ := strings.Cut(v, ".")
	want, _, _ := strings.Cut(SchemaVersion, ".")
	if major != want {
		return fmt.Errorf("telemetry schema version %q: this qoslab reads major %s", v, want)
	}
	return nil
}
