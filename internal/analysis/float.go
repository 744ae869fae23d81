package analysis

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
)

// Float is a statistic that may be undefined: NaN (a cell without repeats,
// a regression without a line, an index the host's effect cannot carry).
// JSON writes an undefined one, NaN or infinite, as null, where
// encoding/json would fail the whole document for one such value, and reads
// null back as NaN.
type Float float64

// MarshalJSON writes f as encoding/json writes a float64, or null.
func (f Float) MarshalJSON() ([]byte, error) {
	x := float64(f)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(x)
}

// UnmarshalJSON reads a number, or null as NaN.
func (f *Float) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*f = Float(math.NaN())
		return nil
	}
	x, err := strconv.ParseFloat(string(bytes.TrimSpace(b)), 64)
	if err != nil {
		return &json.UnmarshalTypeError{Value: "number " + string(b), Type: reflect.TypeFor[Float]()}
	}
	*f = Float(x)
	return nil
}

// IsNaN reports whether f is undefined.
func (f Float) IsNaN() bool { return math.IsNaN(float64(f)) }
