package catalog

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/qoslab/qoslab/internal/units"
)

// This file is what every parameter shares, by the type of its field: how
// it is copied, written, read and shown. A new parameter of one of these
// types needs nothing here.

// ParamsTaken are the parameters of p the workload called name takes: the
// compression ones for compress and decompress, loops or a duration for
// the others. (A function, not a method: a method of Params would be one
// of every type that embeds it.)
func ParamsTaken(name string, p Params) Params {
	var out Params
	for _, k := range paramKeys {
		if k.TakenBy(name) {
			k.Copy(&out, p)
		}
	}
	return out
}

// ParamsShown are the parameters set in p as a reader sees them, in the
// order of ParamKeys: "loops 2e8"; "size 16MiB", "ratio 3", "zstd level
// 3", "sink file".
func ParamsShown(p Params) []string {
	var out []string
	for _, k := range paramKeys {
		s := ""
		switch {
		case k.Show != nil:
			s = k.Show(p)
		case k.IsSet(p):
			s = k.Name + " " + k.Text(p)
		}
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// TakenBy reports whether the workload called name takes the parameter
// (by its kind: duration is refused by those that do not TakesDuration
// when checked).
func (k ParamKey) TakenBy(name string) bool { return k.Compression == IsCompression(name) }

// value is the parameter's field of p.
func (k ParamKey) value(p *Params) reflect.Value { return reflect.ValueOf(k.Field(p)).Elem() }

// IsSet reports whether the parameter is set (not zero) in p.
func (k ParamKey) IsSet(p Params) bool { return !k.value(&p).IsZero() }

// Copy sets the parameter in dst to its value in src.
func (k ParamKey) Copy(dst *Params, src Params) { k.value(dst).Set(k.value(&src)) }

func (k ParamKey) inKey(p Params) bool {
	if k.InKey != nil {
		return k.InKey(p)
	}
	return k.IsSet(p)
}

// Text is the parameter's value in p as a series key writes it: a number
// in digits, a duration as time writes it ("1.5s"), a string as it is, or
// quoted when the key is Quoted.
func (k ParamKey) Text(p Params) string {
	switch v := k.Field(&p).(type) {
	case *uint64:
		return strconv.FormatUint(*v, 10)
	case *time.Duration:
		return v.String()
	case *int64:
		return strconv.FormatInt(*v, 10)
	case *float64:
		return strconv.FormatFloat(*v, 'g', -1, 64)
	case *int:
		return strconv.Itoa(*v)
	case *string:
		if k.Quoted {
			return strconv.Quote(*v)
		}
		return *v
	}
	panic(k.unheld())
}

// parse reads the parameter's value into p from its text as Text writes it.
func (k ParamKey) parse(p *Params, s string) (err error) {
	switch v := k.Field(p).(type) {
	case *uint64:
		*v, err = strconv.ParseUint(s, 10, 64)
	case *time.Duration:
		*v, err = time.ParseDuration(s)
	case *int64:
		*v, err = strconv.ParseInt(s, 10, 64)
	case *float64:
		*v, err = strconv.ParseFloat(s, 64)
	case *int:
		*v, err = strconv.Atoi(s)
	case *string:
		*v = s
		if k.Quoted {
			*v, err = strconv.Unquote(s)
		}
	default:
		panic(k.unheld())
	}
	return err
}

// ReadText reads the parameter's value into p from a user's text (a
// flag's): a count as "2e8" or "200_000_000" up to MaxLoops, a size with
// its unit ("1GiB") up to MaxDataBytes, a string as it is, the others as
// Text writes them. name names the setting in the error.
func (k ParamKey) ReadText(name, s string, p *Params) (err error) {
	switch v := k.Field(p).(type) {
	case *uint64:
		*v, err = units.ParseCount(name, s, MaxLoops)
	case *int64:
		*v, err = units.ParseSize(name, s, MaxDataBytes)
	case *string:
		*v = s
	default:
		err = k.parse(p, s)
	}
	return err
}

// unheld is the bug of a parameter whose field is of a type no layer can
// hold (TestEveryParamKeyIsHeld finds it).
func (k ParamKey) unheld() string {
	var p Params
	return fmt.Sprintf("catalog: parameter %s is a %T, which no layer can hold", k.Name, k.Field(&p))
}

// paramKeyNamed is the parameter a spec and a series key call name.
func paramKeyNamed(name string) (ParamKey, bool) {
	for _, k := range paramKeys {
		if k.Name == name {
			return k, true
		}
	}
	return ParamKey{}, false
}

// always is InKey of the keys every series key of their workloads holds.
func always(Params) bool { return true }

// shown is s when the parameter is set, else "".
func shown(set bool, s string) string {
	if !set {
		return ""
	}
	return s
}

// problem is a Check's answer: err after prefix, "" for no error.
func problem(prefix string, err error) string {
	if err == nil {
		return ""
	}
	return prefix + err.Error()
}

func showCodec(p Params) string {
	if p.Codec == "" {
		return ""
	}
	if p.Level != 0 {
		return p.Codec + " level " + strconv.Itoa(p.Level)
	}
	return p.Codec
}

func checkLoops(w Workload, p Params, maxThreads int) string {
	switch {
	case p.Duration != 0:
		return "" // duration's check says whether the workload takes one
	case w.LoopsInTotal && (p.Loops < uint64(maxThreads) || p.Loops > MaxLoops):
		return fmt.Sprintf(".loops %d: pi's loops are iterations in total, allowed %d (one per thread) .. %d", p.Loops, maxThreads, uint64(MaxLoops))
	case p.Loops < 1 || p.Loops > MaxLoops:
		return fmt.Sprintf(".loops %d: allowed 1..%d per thread", p.Loops, uint64(MaxLoops))
	}
	return ""
}

func checkSink(_ Workload, p Params, _ int) string {
	switch p.Sink {
	case SinkFile, SinkNull:
	case SinkBlock:
		if p.SinkPath == "" {
			return ".sink block needs sink_path: a raw block device whose contents may be overwritten"
		}
	default:
		return fmt.Sprintf(".sink %q: allowed %s", p.Sink, strings.Join(Sinks(), ", "))
	}
	return ""
}

// levels is level's allowed values in the spec's reference.
func levels() string {
	var parts []string
	for _, name := range AllCodecs() {
		c, _ := LookupCodec(name)
		if c.MaxLevel == 0 {
			parts = append(parts, name+" 0 only")
		} else {
			parts = append(parts, fmt.Sprintf("%s %d..%d", name, c.MinLevel, c.MaxLevel))
		}
	}
	return "0 or the codec's levels: " + strings.Join(parts, ", ")
}

// loopsDefaults is loops' default in the spec's reference: each
// workload's.
func loopsDefaults() string {
	var parts []string
	for _, w := range All() {
		if w.TakesLoops() {
			parts = append(parts, fmt.Sprintf("%s %s", w.Name, units.FormatCount(w.DefaultLoops)))
		}
	}
	return strings.Join(parts, ", ")
}
