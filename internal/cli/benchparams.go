package cli

import (
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/qoslab/qoslab/internal/units"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// paramFlag is bench's flag of one cell parameter (catalog.ParamKey.Flag),
// setting it in params. A count or a size keeps its text until read, so
// that its error names the setting (flag, variable or config key) and the
// range allowed; the others are read as they are set, as pflag reads its
// own kinds, and typed in help as pflag types them.
type paramFlag struct {
	key    catalog.ParamKey
	params *catalog.Params
	text   string // a count's or size's, as given; "" for none
}

// addParamFlags adds bench's flag of every cell parameter that has one,
// each defaulting to its value in params, and returns them by flag name.
func addParamFlags(fl *pflag.FlagSet, params *catalog.Params) map[string]*paramFlag {
	out := map[string]*paramFlag{}
	for _, k := range catalog.ParamKeys() {
		if k.Flag == "" {
			continue
		}
		f := &paramFlag{key: k, params: params}
		if b, ok := k.Field(params).(*int64); ok && *b != 0 {
			f.text = units.FormatBytes(*b)
		}
		fl.Var(f, k.Flag, k.Usage)
		out[k.Flag] = f
	}
	return out
}

// deferred says the flag is a count or a size, read by read.
func (f *paramFlag) deferred() bool {
	switch f.key.Field(f.params).(type) {
	case *uint64, *int64:
		return true
	}
	return false
}

// String is the flag's value, "" when it is zero (help then shows no
// default).
func (f *paramFlag) String() string {
	switch v := f.key.Field(f.params).(type) {
	case *string:
		return *v
	case *uint64, *int64:
		return f.text
	}
	if !f.key.IsSet(*f.params) {
		return ""
	}
	return f.key.Text(*f.params)
}

// Set takes the flag's value as pflag's own flags of its kind would.
func (f *paramFlag) Set(s string) (err error) {
	switch v := f.key.Field(f.params).(type) {
	case *uint64, *int64:
		f.text = s
	case *float64:
		*v, err = strconv.ParseFloat(s, 64)
	case *int:
		var n int64
		n, err = strconv.ParseInt(s, 0, 64)
		*v = int(n)
	case *time.Duration:
		*v, err = time.ParseDuration(s)
	case *string:
		*v = s
	}
	return err
}

// Type names the flag's kind in help and in a setting's error.
func (f *paramFlag) Type() string {
	switch f.key.Field(f.params).(type) {
	case *float64:
		return "float64"
	case *int:
		return "int"
	case *time.Duration:
		return "duration"
	}
	return "string"
}

// read reads a count's or a size's text, naming the setting as name.
func (f *paramFlag) read(name string) error {
	if !f.deferred() || f.text == "" {
		return nil
	}
	return f.key.ReadText(name, f.text, f.params)
}
