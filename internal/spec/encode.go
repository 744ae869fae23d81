package spec

import (
	"fmt"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/units"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// Encode writes s as a spec file: YAML in the spec's own keys and units
// (duration: 1s, size: 1GiB, cell_timeout: 10m), every value written out,
// defaults included, so ParseSpec reads back the same Spec (Quick aside:
// a shrunk spec's loops and sizes are written as shrunk, and no key says
// it was). A recorded spec (run.json's, which is the Spec's JSON, with
// duration_ns and size_bytes) becomes a file `qoslab run --spec` takes.
func Encode(s Spec) ([]byte, error) {
	m := &mapping{}
	m.add("name", str(s.Name))
	if s.Description != "" {
		m.add("description", str(s.Description))
	}
	m.add("targets", flowList(s.Targets, func(t string) *yaml.Node { return str(t) }))
	vm := &mapping{}
	if s.VM.Backend != "" {
		vm.add("backend", str(s.VM.Backend))
	}
	if s.VM.Image != "" {
		vm.add("image", str(s.VM.Image))
	}
	vm.add("cpus", num(strconv.Itoa(s.VM.CPUs)))
	if s.VM.MemoryBytes != 0 {
		vm.add("memory", str(units.FormatBytes(s.VM.MemoryBytes)))
	}
	if s.VM.DiskBytes != 0 {
		vm.add("disk", str(units.FormatBytes(s.VM.DiskBytes)))
	}
	if s.VM.Accel != "" {
		vm.add("accel", str(s.VM.Accel))
	}
	if s.VM.Model != "" {
		vm.add("model", str(s.VM.Model))
	}
	if s.VM.HostQoS != 0 {
		vm.add("host_qos", num(strconv.Itoa(int(s.VM.HostQoS))))
	}
	m.add("vm", vm.node())
	matrix := &yaml.Node{Kind: yaml.SequenceNode}
	for _, e := range s.Matrix {
		en, err := encodeEntry(e)
		if err != nil {
			return nil, err
		}
		matrix.Content = append(matrix.Content, en)
	}
	m.add("matrix", matrix)
	m.add("repeats", num(strconv.Itoa(s.Repeats)))
	m.add("max_repeats", num(strconv.Itoa(s.MaxRepeats)))
	m.add("warmup", num(strconv.Itoa(s.Warmup)))
	m.add("order", str(s.Order))
	if s.Seed != nil {
		m.add("seed", num(strconv.FormatUint(*s.Seed, 10)))
	}
	m.add("contention", num(s.Contention.String()))
	m.add("telemetry_ms", num(strconv.Itoa(s.TelemetryMs)))
	m.add("data_seed", num(strconv.FormatUint(s.DataSeed, 10)))
	verdict := &mapping{}
	verdict.add("relative_margin", num(strconv.FormatFloat(s.Verdict.Relative, 'g', -1, 64)))
	verdict.add("absolute_margin", num(strconv.FormatFloat(s.Verdict.Absolute, 'g', -1, 64)))
	m.add("verdict", verdict.node())
	if s.CellTimeout != 0 {
		m.add("cell_timeout", str(s.CellTimeout.String()))
	}
	return yaml.Marshal(m.node())
}

// encodeEntry is a matrix entry in one line: its workload, classes,
// thread counts and the parameters its workload takes that are set.
func encodeEntry(e MatrixEntry) (*yaml.Node, error) {
	m := &mapping{}
	m.add("workload", str(e.Workload))
	m.add("qos", flowList(e.QoS, func(c qos.Class) *yaml.Node { return num(strconv.Itoa(int(c))) }))
	m.add("threads", flowList(e.Threads, func(n int) *yaml.Node { return num(strconv.Itoa(n)) }))
	p := catalog.ParamsTaken(e.Workload, e.Params)
	for _, k := range catalog.ParamKeys() {
		var v *yaml.Node
		switch f := k.Field(&p).(type) {
		case *uint64:
			if *f != 0 {
				v = num(strconv.FormatUint(*f, 10))
			}
		case *time.Duration:
			if *f != 0 {
				v = str(f.String())
			}
		case *int64:
			if *f != 0 {
				v = str(units.FormatBytes(*f))
			}
		case *float64:
			if *f != 0 {
				v = num(strconv.FormatFloat(*f, 'g', -1, 64))
			}
		case *int:
			if *f != 0 {
				v = num(strconv.Itoa(*f))
			}
		case *string:
			if *f != "" {
				v = str(*f)
			}
		default:
			// A type the decoder would refuse too (TestEveryParamKeyDecodes).
			return nil, fmt.Errorf("spec: parameter %s is a %T, which a spec cannot hold", k.Name, f)
		}
		if v != nil {
			m.add(k.Name, v)
		}
	}
	n := m.node()
	n.Style = yaml.FlowStyle
	return n, nil
}

// mapping builds a YAML mapping in the order its keys are added.
type mapping struct{ content []*yaml.Node }

func (m *mapping) add(key string, v *yaml.Node) { m.content = append(m.content, str(key), v) }

func (m *mapping) node() *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Content: m.content}
}

// str is a string scalar, quoted by the encoder only where YAML needs it.
func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// num is a scalar written as it is (a number, or contention's "all").
func num(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }

// flowList is a list written on one line, [9, 33].
func flowList[T any](items []T, node func(T) *yaml.Node) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, it := range items {
		n.Content = append(n.Content, node(it))
	}
	return n
}
