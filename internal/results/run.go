package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"

	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/procsched"
	"github.com/qoslab/qoslab/internal/spec"
)

// Recorded is one part of run.json decoded once, when the file is read,
// with the JSON it was recorded as. SaveRun writes that JSON back as it
// was, not the value encoded again: a run written by an older qoslab,
// whose spec lacks a field this build's type has, keeps its bytes when it
// is resumed, and what was recorded is never rewritten by reading it.
type Recorded[T any] struct {
	value T
	// raw is the JSON as read, or as Set encoded it; nil when run.json
	// has none.
	raw json.RawMessage
}

// NewRecorded is v as run.json records it, encoded now. Its value is the
// JSON decoded again, as a reader of run.json will have it (what the JSON
// does not hold, such as a process handle, is not kept).
func NewRecorded[T any](v T) (Recorded[T], error) {
	b, err := json.Marshal(v)
	if err != nil {
		return Recorded[T]{}, err
	}
	return DecodeRecorded[T](b)
}

// DecodeRecorded is raw, as a run's run.json would hold it, decoded.
func DecodeRecorded[T any](raw json.RawMessage) (Recorded[T], error) {
	var r Recorded[T]
	err := r.UnmarshalJSON(raw)
	return r, err
}

// Value is the recorded value; the zero value when run.json has none.
func (r Recorded[T]) Value() T { return r.value }

// Present reports whether run.json holds this part (and not null).
func (r Recorded[T]) Present() bool { return len(r.raw) > 0 && string(r.raw) != "null" }

// IsZero says a part run.json does not hold, which omitzero leaves out.
func (r Recorded[T]) IsZero() bool { return len(r.raw) == 0 }

// MarshalJSON writes the JSON as recorded.
func (r Recorded[T]) MarshalJSON() ([]byte, error) {
	if len(r.raw) == 0 {
		return []byte("null"), nil
	}
	return r.raw, nil
}

// UnmarshalJSON keeps b and decodes it.
func (r *Recorded[T]) UnmarshalJSON(b []byte) error {
	r.raw = bytes.Clone(b)
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	r.value = v
	return nil
}

// RunSpec is run.json's spec: the experiment spec as applied, defaults
// filled in, with the JSON it was recorded as.
type RunSpec struct{ Recorded[spec.Spec] }

// RecordSpec is s as run.json records it.
func RecordSpec(s spec.Spec) (RunSpec, error) {
	r, err := NewRecorded(s)
	return RunSpec{r}, err
}

// DecodeSpec is raw, a spec as run.json would hold it, decoded.
func DecodeSpec(raw json.RawMessage) (RunSpec, error) {
	var r RunSpec
	err := r.UnmarshalJSON(raw)
	return r, err
}

// Text is the spec as recorded, indented.
func (r RunSpec) Text() string {
	var buf bytes.Buffer
	if len(r.raw) == 0 || json.Indent(&buf, r.raw, "", "  ") != nil {
		return string(r.raw)
	}
	return buf.String()
}

// UnmarshalJSON decodes the spec. A run recorded before specs had a data
// seed measured with the default one, so its spec says so.
func (r *RunSpec) UnmarshalJSON(b []byte) error {
	if err := r.Recorded.UnmarshalJSON(b); err != nil {
		return err
	}
	var seeded struct {
		DataSeed *uint64 `json:"data_seed"`
	}
	if err := json.Unmarshal(b, &seeded); err == nil && seeded.DataSeed == nil {
		r.value.DataSeed = spec.DefaultDataSeed
	}
	return nil
}

// Info is a target's agent Info as run.json holds it: the agent protocol's
// InfoReply in its protocol field names (agent.InfoJSON). Fields a run
// recorded before they existed are zero; Fields lists what was recorded.
type Info struct {
	AgentVersion   string       `json:"agent_version"`
	Protocol       InfoProtocol `json:"protocol"`
	OS             string       `json:"os"`
	Arch           string       `json:"arch"`
	OSVersion      string       `json:"os_version"`
	CPUModel       string       `json:"cpu_model"`
	LogicalCPUs    uint32       `json:"logical_cpus"`
	PerfLevels     []PerfLevel  `json:"perf_levels"`
	MemoryBytes    Uint64       `json:"memory_bytes"`
	Virtualized    bool         `json:"virtualized"`
	Virtualization string       `json:"virtualization"`
	QoSSupport     string       `json:"qos_support"`
	Workloads      []string     `json:"workloads"`
	Codecs         []string     `json:"codecs"`
	MmulImpl       string       `json:"mmul_impl"`
	Hostname       string       `json:"hostname"`
	PID            int32        `json:"pid"`
	MaxThreads     uint32       `json:"max_threads"`
}

// InfoProtocol is the agent protocol's version an agent speaks.
type InfoProtocol struct {
	Major uint32 `json:"major"`
	Minor uint32 `json:"minor"`
}

// PerfLevel is one kind of CPU an agent's machine has (Apple silicon's
// performance and efficiency cores; Linux's by cpu_capacity).
type PerfLevel struct {
	Name        string   `json:"name"`
	LogicalCPUs uint32   `json:"logical_cpus"`
	CPUs        []uint32 `json:"cpus"` // Linux: which CPUs are of this kind
	Capacity    uint32   `json:"capacity"`
}

// Uint64 is a 64-bit number of the agent protocol's JSON, which writes it
// as a string ("8589934592") and reads it either way, as this does.
type Uint64 uint64

// MarshalJSON writes the number as a string, as the protocol does.
func (u Uint64) MarshalJSON() ([]byte, error) {
	return []byte(strconv.Quote(strconv.FormatUint(uint64(u), 10))), nil
}

// UnmarshalJSON reads a number or a string that holds one.
func (u *Uint64) UnmarshalJSON(b []byte) error {
	text := string(bytes.TrimSpace(b))
	if s, err := strconv.Unquote(text); err == nil {
		text = s
	}
	x, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		return &json.UnmarshalTypeError{Value: "value " + string(b), Type: reflect.TypeFor[uint64]()}
	}
	*u = Uint64(x)
	return nil
}

// TargetInfo is one target's Info with the JSON it was recorded as.
type TargetInfo struct{ Recorded[Info] }

// RecordInfo is a target's Info as the agent's protocol encodes it
// (agent.InfoJSON), decoded as run.json's readers will read it.
func RecordInfo(raw json.RawMessage) (TargetInfo, error) {
	var t TargetInfo
	if err := t.UnmarshalJSON(raw); err != nil {
		return TargetInfo{}, fmt.Errorf("a target's Info: %w", err)
	}
	return t, nil
}

// InfoField is one top-level field of a target's Info as recorded.
type InfoField struct {
	Key   string
	Value json.RawMessage
}

// Text is the field's value as a reader wants it: a string unquoted,
// anything else compact.
func (f InfoField) Text() string {
	var s string
	if json.Unmarshal(f.Value, &s) == nil {
		return s
	}
	var buf bytes.Buffer
	if json.Compact(&buf, f.Value) != nil {
		return string(f.Value)
	}
	return buf.String()
}

// Fields are the top-level fields the Info recorded, by key: a report
// lists what the agent said, no more (fields a run's agent did not have
// are not shown as zero).
func (t TargetInfo) Fields() []InfoField {
	var fields map[string]json.RawMessage
	if json.Unmarshal(t.raw, &fields) != nil { // cannot fail: the Info decoded as an object or null
		return nil
	}
	out := make([]InfoField, 0, len(fields))
	for k, v := range fields {
		out = append(out, InfoField{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Targets maps a target's name ("host", "vm") to its agent's Info.
type Targets map[string]TargetInfo

// UnmarshalJSON decodes each target's Info, naming the target whose Info
// does not decode.
func (ts *Targets) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	out := Targets{}
	names := make([]string, 0, len(raw))
	for name := range raw {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		var t TargetInfo
		if err := t.UnmarshalJSON(raw[name]); err != nil {
			return fmt.Errorf("%s's Info: %w", name, err)
		}
		out[name] = t
	}
	*ts = out
	return nil
}

// Machines describes each VM as the host saw it, by target.
type Machines = Recorded[map[string]hv.MachineInfo]

// Scheduling is how qoslab's own processes were scheduled in the last
// session: the controller as it was started, and the class each child it
// started (host agent, hypervisor, spinners) was started at.
type Scheduling struct {
	Controller procsched.Scheduling `json:"controller"`
	// Started maps each child to the class it was started at.
	Started map[string]hv.ProcessClass `json:"started,omitempty"`
}

// decodeRun decodes run.json, naming the part that does not decode.
func decodeRun(b []byte) (Run, error) {
	var parts map[string]json.RawMessage
	if err := json.Unmarshal(b, &parts); err != nil {
		return Run{}, err
	}
	var r Run
	for _, p := range []struct {
		key string
		v   json.Unmarshaler
	}{{"spec", &r.Spec}, {"targets", &r.Targets}, {"machines", &r.Machines}, {"contention", &r.Contention}, {"scheduling", &r.Scheduling}} {
		if raw, ok := parts[p.key]; ok {
			if err := p.v.UnmarshalJSON(raw); err != nil {
				return Run{}, fmt.Errorf("its %s: %w", p.key, err)
			}
			delete(parts, p.key)
		}
	}
	rest, err := json.Marshal(parts)
	if err != nil {
		return Run{}, err
	}
	// The typed parts are decoded; the rest (plain fields) decode as
	// themselves, over them without touching them.
	if err := json.Unmarshal(rest, &r); err != nil {
		return Run{}, err
	}
	return r, nil
}
