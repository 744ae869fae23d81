package analysis

import (
	"encoding/json"
	"math"
)

// The JSON of a ratio says which estimator it carries, one name for one
// number: ratio_hl is the Hodges-Lehmann ratio, exp of the shift's
// estimate, the number every verdict line and table prints, and
// ratio_hl_low and ratio_hl_high are its interval, exp of the shift's ends
// (at shift.confidence); ratio_of_medians is the ratio of the median total
// rates (over thread counts, their geometric mean), which no text prints.
// The ratio_hl fields are written from the shift when the JSON is, so they
// cannot disagree with it.

// HLRatio is a shift as a ratio: the Hodges-Lehmann estimate and its
// interval ends, each exp of the shift's (NaN where it has none).
type HLRatio struct {
	Ratio Float `json:"ratio_hl"`
	Low   Float `json:"ratio_hl_low"`
	High  Float `json:"ratio_hl_high"`
}

// HLRatioOf is s as a ratio.
func HLRatioOf(s Shift) HLRatio {
	exp := func(f Float) Float { return Float(math.Exp(float64(f))) }
	return HLRatio{Ratio: exp(s.Estimate), Low: exp(s.Low), High: exp(s.High)}
}

// MarshalJSON writes the sensitivity with its Hodges-Lehmann ratio and
// interval (ratio_hl, ratio_hl_low, ratio_hl_high) beside its fields.
func (s Sensitivity) MarshalJSON() ([]byte, error) {
	type plain Sensitivity
	return json.Marshal(struct {
		plain
		HLRatio
	}{plain(s), HLRatioOf(s.Shift)})
}

// MarshalJSON writes one thread count's ratio with its Hodges-Lehmann
// ratio and interval beside its fields.
func (r ThreadRatio) MarshalJSON() ([]byte, error) {
	type plain ThreadRatio
	return json.Marshal(struct {
		plain
		HLRatio
	}{plain(r), HLRatioOf(r.Shift)})
}

// MarshalJSON writes one thread count's shift with its Hodges-Lehmann
// ratio and interval beside it: the verdict's own interval at that thread
// count (Verdict.VMByThreads).
func (t ThreadShift) MarshalJSON() ([]byte, error) {
	type plain ThreadShift
	return json.Marshal(struct {
		plain
		HLRatio
	}{plain(t), HLRatioOf(t.Shift)})
}
