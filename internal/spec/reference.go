package spec

import (
	"fmt"
	"strings"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/contention"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/hv/registry"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/telemetry"
	"github.com/qoslab/qoslab/internal/units"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// keyDoc documents one key of a spec file: docs/spec.md is written from
// these, and a test holds them to the keys ParseSpec accepts.
type keyDoc struct {
	// Key is the key's path: "repeats", "vm.cpus", "matrix[].loops".
	Key     string
	Type    string
	Default string
	Allowed string
	Doc     string
}

// keyDocs lists every key a spec may have, in the order docs/spec.md
// shows them.
func keyDocs() []keyDoc {
	classes := "a list of QoS classes by name or number: " + qos.Allowed
	docs := []keyDoc{
		{"name", "string", "the file's base name", fmt.Sprintf("up to %d letters, digits, '.', '_' and '-', starting with a letter or digit", maxNameLen),
			"names the experiment and its results directory (<name>-<UTC time>)"},
		{"description", "string", "none", "any text", "one line about the experiment, shown in reports"},
		{"targets", "list", "[host, vm]", TargetHost + ", " + TargetVM, "where to measure, in this order; each cell runs on every target"},
		{"vm", "mapping", "", "the vm.* keys", "the VM of the vm target"},
		{"vm.backend", "string", "this machine's: vz on Apple silicon, else qemu", strings.Join(registry.Names(), ", "), "the hypervisor"},
		{"vm.image", "string", "the built-in recipe's image for this machine's arch", "an image name in the image store", "what the VM boots"},
		{"vm.cpus", "whole number", fmt.Sprint(defaultVMCPUs), fmt.Sprintf("1..%d (the qemu backend gives at most the host's CPUs, and says so)", maxVMCPUs), "the VM's vCPUs"},
		{"vm.memory", "size", fmt.Sprintf("%d MiB, more when compression needs it (twice the largest input + 512 MiB)", minVMMemoryMiB),
			fmt.Sprintf("%s..%s", units.FormatBytes(minVMMemory), units.FormatBytes(maxVMMemory)), "the VM's memory; the guest holds a compression cell's input in it"},
		{"vm.disk", "size", "what the compression cells write, and 64 MiB at least", "up to " + units.FormatBytes(maxVMDisk), "the VM's raw scratch disk, the guest's file sink"},
		{"vm.accel", "string", "KVM (qemu on Linux) or hvf (qemu on macOS) when a probe boot works, else TCG", strings.Join(registry.Accels(), ", ") + "; " + strings.Join(registry.AccelBackends(), ", ") + " only", "how qemu runs the guest"},
		{"vm.model", "string", "the backend's own (" + hv.ModelDefault + ")", strings.Join(registry.Models(), ", ") + "; " + hv.ModelVZ + ": qemu backend, arm64 images, Linux hosts with vhost-device-vsock",
			"the VM's device model: " + hv.ModelVZ + " lays the guest out as Virtualization.framework does (the virtio console as the only console, no UART, no virtio-serial port, the agent over vsock through rust-vmm's vhost-device-vsock), to test the guest a Mac boots; results say qemu, model vz, never that Virtualization.framework ran"},
		{"vm.host_qos", "QoS class", "none: what the hypervisor gives the vCPU threads", qos.Allowed, "the class the VM's vCPU threads get on the host (qemu on Linux applies it per vCPU thread; vz applies only background, to the framework's service process as a whole, and refuses the others; run.json notes what was applied)"},
		{"matrix", "list of entries", "", "at least one entry", "the cells: each entry is one workload at each of its classes with each of its thread counts"},
		{"matrix[].workload", "string", "", strings.Join(catalog.Names(), ", "), "the workload; one per entry"},
		{"matrix[].qos", "list", "[background, user-interactive]", classes, "the classes to measure at"},
		{"matrix[].threads", "counts", "1", fmt.Sprintf(`"4", "1-4", "1,2,4", "10-70/10": 1..%d threads (procs: 1..%d processes)`, catalog.MaxThreads, catalog.MaxProcs), "the thread counts (process counts for procs)"},
	}
	for _, k := range catalog.ParamKeys() {
		docs = append(docs, keyDoc{"matrix[]." + k.Name, k.Type, k.Default, k.Allowed, k.Doc})
	}
	return append(docs, []keyDoc{
		{"repeats", "whole number", fmt.Sprint(DefaultRepeats), fmt.Sprintf("1..%d", maxRepeats), "timed runs of every cell on every target; run's --repeats overrides it"},
		{"max_repeats", "whole number", fmt.Sprintf("%d times repeats", DefaultMaxRepeatsFactor), fmt.Sprintf("0 (off) or repeats..%d", maxRepeats), "the most repeats per cell a run may reach while a verdict is undecided because an interval is too wide: it adds repeats of the undecided thread counts' cells in blocks (repeats more each time), deciding again after each with a group-sequential correction (docs/design.md, \"Looks\"); run's --max-repeats overrides it, and its default follows run's --repeats"},
		{"warmup", "whole number", fmt.Sprint(DefaultWarmup), fmt.Sprintf("0..%d", maxWarmup), "untimed runs of each cell on each target, just before its first timed run"},
		{"order", "string", OrderInterleaved, OrderInterleaved + " (shuffled per repeat, targets alternating), " + OrderSequential + " (as written)", "how the plan lays the cells out; repeats are always outermost"},
		{"seed", "whole number", "picked at random and recorded in run.json", "0..18446744073709551615", "seeds the interleaved shuffle: the same spec and seed give the same plan"},
		{"contention", "whole number or all", "0", fmt.Sprintf("0..%d, or all (one per CPU qoslab may use)", contention.MaxSpinners), "default-priority spinner threads on the host, outside any VM, for the whole run; spinner i is pinned to allowed CPU i mod the count of allowed CPUs (Linux; macOS cannot pin threads)"},
		{"telemetry_ms", "whole number", fmt.Sprint(telemetry.DefaultIntervalMs), fmt.Sprintf("0 (off) or %d..%d", minTelemetryMs, maxTelemetryMs), "the telemetry sampling interval while each timed cell runs"},
		{"data_seed", "whole number", fmt.Sprint(DefaultDataSeed), "0..18446744073709551615", "seeds the generated compression input and pi's random numbers"},
		{"verdict", "mapping", "", "the verdict.* keys", "how small a QoS effect left in the VM must be for the verdict to call it none (docs/design.md, \"The verdict\")"},
		{"verdict.relative_margin", "number", fmt.Sprint(analysis.DefaultRelativeMargin), "above 0 and below 1", "the share of the host's QoS effect, on a log scale and at the low end of the host's 90% interval, that the VM may keep: 0.1 is 10%, 1.72x beside a 231x host effect"},
		{"verdict.absolute_margin", "number", fmt.Sprint(analysis.DefaultAbsoluteMargin), fmt.Sprintf("above 1, at most %d", maxAbsoluteMargin), "the largest VM ratio, either way, that may count as no effect whatever the host's: 1.25 allows 0.8x..1.25x; the band is the narrower of the two"},
		{"cell_timeout", "duration", "none: no limit", fmt.Sprintf("%s..%s, written 90s, 10m, 1h", minCellTimeout, maxCellTimeout), "ends a cell run that has not finished after this long: the run fails with what finished kept, to finish with --resume (run's and bench's --cell-timeout override it); a cell running far past its expected time is named on the terminal either way"},
	}...)
}

// reference is docs/spec.md: every key of a spec file, its type,
// default and allowed values.
func reference() string {
	var b strings.Builder
	b.WriteString(`# Experiment specs

An experiment spec is a YAML file given to ` + "`qoslab run --spec FILE`" + `: where to
measure, what, and how often. The built-in specs (` + "`qoslab run --default NAME`" + `)
are written in it too. qoslab reads a spec strictly: a key it does not know is
an error naming its line, the keys allowed there and the likely intended one,
and every problem is reported at once. Keys that only the other kind of
workload takes (` + "`size`" + ` on ` + "`fp`" + `, ` + "`loops`" + ` on ` + "`compress`" + `) are errors too.
Lists may be written as YAML lists or as one comma-separated string
(` + "`qos: 9,33`" + `); sizes take units (` + "`1GiB`, `512MiB`" + `); counts take ` + "`2e8`" + ` and digit
groups (` + "`200_000_000`" + `). The spec as applied, every default filled in, is
recorded in the run's ` + "`run.json`" + `: as applied (` + "`spec`" + `) and as a spec
file in these keys (` + "`spec_file`" + `), which ` + "`run --spec`" + ` takes; ` + "`qoslab run --again DIR`" + `
runs it again with a new seed.

This page is generated from the spec decoder's own table of keys; a test
keeps the two equal.

` + "```yaml" + `
name: mine
targets: [host, vm]
vm:
  cpus: 2
matrix:
  - {workload: fp, qos: [background, user-interactive], threads: 1-4, loops: 2e8}
  - {workload: compress, qos: [9, 33], size: 256MiB, codec: zstd, sink: file}
repeats: 5
contention: 2
` + "```" + `

| key | type | default | allowed | what it is |
|---|---|---|---|---|
`)
	for _, k := range keyDocs() {
		def := k.Default
		if def == "" {
			def = "required"
			if k.Type == "mapping" {
				def = "-"
			}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", k.Key, k.Type, mdCell(def), mdCell(k.Allowed), mdCell(k.Doc))
	}
	return b.String()
}

func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
