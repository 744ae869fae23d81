// Package testfleet writes constructed fleets for tests and chart reviews:
// results directories of as many machines as asked, each a host and a VM
// running fp at QoS 9 and 33, whose rates are chosen, not measured, so that
// a comparison across them holds every kind of verdict (yes, no with the
// VM keeping an effect, no with it reversed, inconclusive at the band's
// edge, inconclusive with no host effect). They are written through
// internal/results, as a run writes its own, and every run.json says
// "constructed" in its tool version, machine descriptions and notes.
//
// WriteWith builds a fleet at scale, as a comparison across a real one
// sees it: long host names, and machines that differ in CPU, OS, VM and
// in where each side's effect lies (its records carry CPU time), so that
// every column of compare's per-machine table differs between runs.
package testfleet

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"time"

	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// Note is the note every constructed run.json carries.
const Note = "constructed fleet, not measured: written by internal/testfleet"

// notMeasured stands where a measured run has its machine's OS and CPU.
const notMeasured = "constructed (not measured)"

// specYAML is each machine's spec: fp at QoS 9 and 33 on host and VM, one
// thread, cells of 200 ms, 6 repeats (as testdata/fleet/vm.yaml).
const specYAML = `name: fleet-vm
description: constructed fleet machine (not measured)
targets: [host, vm]
vm: {cpus: 1}
matrix:
  - workload: fp
    qos: [background, user-interactive]
    threads: [1]
    duration: 200ms
repeats: 6
`

// cellDuration is specYAML's cell length.
const cellDuration = 200 * time.Millisecond

// machine is one constructed machine: its name, the host's and the VM's
// ratio of QoS 33's rate over QoS 9's, and how far its repeats wander (a
// fraction either way); with Options.Varied, its CPU, OS and VM (index
// into cpus, oses, vms, from 1; 0 for the plain fleet's).
type machine struct {
	name            string
	hostRatio       float64
	vmRatio, wobble float64
	cpu, os, vm     int
}

// Options say how WriteWith's fleet differs from Write's.
type Options struct {
	// NameWidth, when set, pads each host's name (fleet-01-...) to that
	// many characters: compare labels a column with it, so this is the
	// label's width. At least 8; no dot, which a label stops at.
	NameWidth int
	// Varied gives the machines different CPUs, OS versions and VMs (in
	// cycles of different lengths, so that most combinations occur), and
	// records with CPU time, so that the mechanism says where each side's
	// effect lies.
	Varied bool
}

// cpus, oses and vms are what a varied fleet's machines cycle through:
// each a real machine's description, marked constructed; vms are
// run.json's machines entries.
var (
	cpus = []string{"Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz (constructed)", "AMD EPYC 7763 64-Core Processor (constructed)",
		"Apple M2 Pro (constructed)", "Intel(R) Core(TM) i7-10700K CPU @ 3.80GHz (constructed)", "AMD Ryzen 9 7950X 16-Core Processor (constructed)"}
	oses = []string{"Ubuntu 24.04.1 LTS, Linux 6.8.0-45-generic (constructed)", "Debian GNU/Linux 12 (bookworm), Linux 6.1.0-25-amd64 (constructed)",
		"macOS 15.1 (24B83) (constructed)", "Fedora Linux 41 (Workstation Edition), Linux 6.11.4-301.fc41.x86_64 (constructed)"}
	vms = []string{`{"backend": "qemu", "accel": "kvm", "cpus": 1}`, `{"backend": "qemu", "accel": "tcg", "cpus": 1}`,
		`{"backend": "vz", "accel": "vz", "cpus": 1}`}
)

// cases are the kinds of machine a fleet cycles through, the VM's ratio
// and its repeats' wander, so that every verdict the rule allows is there.
var cases = []struct{ vmRatio, wobble float64 }{
	{1.00, 0.02}, // yes: the VM keeps none of the host's effect
	{1.05, 0.03}, // yes
	{2.50, 0.03}, // no: the VM keeps an effect
	{1.22, 0.06}, // inconclusive: the interval crosses the band's edge
	{0.50, 0.03}, // no: QoS reversed in the VM
	{0.98, 0.02}, // yes
	{1.02, 0.30}, // inconclusive: repeats too scattered
	{1.60, 0.02}, // no
}

// machines lays out n machines: named fleet-01, fleet-02, ... (padded to
// o.NameWidth); host ratios spread from 20x to 500x (every seventh
// machine's host shows no effect at all); the VM's as cases give, each a
// little varied.
func machines(n int, o Options, rng *rand.Rand) []machine {
	out := make([]machine, n)
	for i := range out {
		c := cases[i%len(cases)]
		host := math.Exp(math.Log(20) + (math.Log(500)-math.Log(20))*rng.Float64())
		if i%7 == 6 {
			host = 1
		}
		out[i] = machine{name: hostName(i, o.NameWidth), hostRatio: host,
			vmRatio: c.vmRatio * (1 + 0.02*(rng.Float64()-0.5)), wobble: c.wobble}
		if o.Varied {
			out[i].cpu, out[i].os, out[i].vm = 1+i%len(cpus), 1+i%len(oses), 1+i%len(vms)
		}
	}
	return out
}

// hostName is machine i's name, fleet-01, padded to width characters with
// the kind of words a data centre's host names carry.
func hostName(i, width int) string {
	name := fmt.Sprintf("fleet-%02d", i+1)
	if width <= len(name) {
		return name
	}
	pad := "-rack-b7-euwest1-compute-node-perf-lab-qos-measurement"
	for len(name)+len(pad) < width {
		pad += pad
	}
	return name + pad[:width-len(name)]
}

// Write writes a fleet of n machines under parent, one directory per
// machine (parent/fleet-01/fleet-vm-<start>), and returns the results
// directories in order. It is deterministic: the same n gives the same
// rates, names and start times.
func Write(parent string, n int) ([]string, error) {
	return WriteWith(parent, n, Options{})
}

// WriteWith writes a fleet of n machines as Write does, o saying how its
// machines differ from Write's.
func WriteWith(parent string, n int, o Options) ([]string, error) {
	if o.NameWidth != 0 && o.NameWidth < len("fleet-01") {
		return nil, fmt.Errorf("a constructed fleet's host names are at least 8 characters (fleet-01), not %d", o.NameWidth)
	}
	s, err := spec.ParseSpec([]byte(specYAML), "fleet-vm")
	if err != nil {
		return nil, fmt.Errorf("the constructed fleet's spec: %w", err)
	}
	raw, err := results.RecordSpec(s)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(1, uint64(n))) //nolint:gosec // G404: constructed rates, not secrets
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var dirs []string
	for i, m := range machines(n, o, rng) {
		d, err := writeMachine(filepath.Join(parent, m.name), m, raw, start.Add(time.Duration(i)*time.Minute), rng)
		if err != nil {
			return dirs, fmt.Errorf("constructed machine %s: %w", m.name, err)
		}
		dirs = append(dirs, d)
	}
	return dirs, nil
}

// writeMachine writes machine m's results directory under parent, started
// at start, and returns its path.
func writeMachine(parent string, m machine, recorded results.RunSpec, start time.Time, rng *rand.Rand) (string, error) {
	d, err := results.Create(parent, "fleet-vm", start)
	if err != nil {
		return "", err
	}
	info := func(target string) results.TargetInfo {
		osVersion, cpu := notMeasured, notMeasured
		if m.cpu > 0 {
			osVersion, cpu = oses[m.os-1], cpus[m.cpu-1]
		}
		b, _ := json.Marshal(map[string]any{
			"agent_version": "constructed", "os": "linux", "arch": "amd64", "os_version": osVersion, "cpu_model": cpu,
			"logical_cpus": 2, "hostname": map[string]string{spec.TargetHost: m.name, spec.TargetVM: "(none)"}[target],
			"virtualized": target == spec.TargetVM,
		})
		t, err := results.RecordInfo(b)
		if err != nil {
			panic(err) // constructed above: it decodes
		}
		return t
	}
	d.Run.ToolVersion = "constructed"
	d.Run.Spec = recorded
	d.Run.Seed = 1
	d.Run.Planned = 2 * 2 * 6
	d.Run.Targets = results.Targets{spec.TargetHost: info(spec.TargetHost), spec.TargetVM: info(spec.TargetVM)}
	machines := `{"vm": {"backend": "qemu", "accel": "tcg", "cpus": 1}}`
	if m.vm > 0 {
		machines = `{"vm": ` + vms[m.vm-1] + `}`
	}
	if d.Run.Machines, err = results.DecodeRecorded[map[string]hv.MachineInfo](json.RawMessage(machines)); err != nil {
		return "", err
	}
	d.Run.Notes = []string{Note}
	log, _, err := results.OpenSampleLog(filepath.Join(d.Path, results.SamplesFile))
	if err != nil {
		return "", err
	}
	// Rates per second at QoS 33; QoS 9's is it over the target's ratio.
	high := map[string]float64{spec.TargetHost: 5e8, spec.TargetVM: 1e7}
	ratio := map[string]float64{spec.TargetHost: m.hostRatio, spec.TargetVM: m.vmRatio}
	at := start
	for repeat := 1; repeat <= 6; repeat++ {
		for _, target := range []string{spec.TargetHost, spec.TargetVM} {
			for _, q := range []int{9, 33} {
				rate := high[target]
				if q == 9 {
					rate /= ratio[target]
				}
				work := math.Round(rate * (1 + m.wobble*(2*rng.Float64()-1)) * cellDuration.Seconds())
				at = at.Add(time.Second)
				series := catalog.SeriesKey{Target: target, Workload: catalog.FP, QoS: q, Threads: 1, Params: catalog.Params{Duration: cellDuration}}
				rec := results.Record{SchemaVersion: results.SchemaVersion, RunRecords: 1, RecordedAt: at,
					Cell: series.String(), Params: &series.Params,
					Sample: results.Sample{Target: target, Workload: "fp", QoS: q, Threads: 1, Repeat: repeat,
						EndNs: cellDuration.Nanoseconds(), Work: work, Unit: "loops",
						Rate: work / cellDuration.Seconds(), QoSApplied: q, QoSFull: true, DurationNs: cellDuration.Nanoseconds()}}
				if m.cpu > 0 {
					rec.CPUNs = cpuTime(m, target, q, ratio[target], rng)
				}
				if err := log.Append(rec); err != nil {
					log.Close()
					return "", err
				}
			}
		}
	}
	if err := log.Close(); err != nil {
		return "", err
	}
	return d.Path, d.Finish(at.Add(time.Second), nil)
}

// cpuTime is a varied machine's cell run's CPU time at class q on target,
// whose classes' rates differ by ratio: the faster class gets 98% of a
// CPU, the other that over the ratio, so that the effect is in CPU share;
// but in a VM of every other CPU model the effect is in speed (both
// classes get 98%).
func cpuTime(m machine, target string, q int, ratio float64, rng *rand.Rand) int64 {
	share := 0.98
	if target == spec.TargetHost || m.cpu%2 == 1 {
		switch {
		case q == 9 && ratio > 1:
			share /= ratio
		case q == 33 && ratio < 1:
			share *= ratio
		}
	}
	return int64(math.Round(share * (1 + 0.01*(2*rng.Float64()-1)) * float64(cellDuration.Nanoseconds())))
}
