package compare

import (
	"encoding/json"

	"github.com/qoslab/qoslab/internal/analysis"
)

// findingValueJSON is one run's finding as the JSON writes it, named by
// what it carries: a subsumption index as si, si_low and si_high, its
// change against the baseline a difference; a QoS sensitivity as
// ratio_hl, ratio_hl_low and ratio_hl_high (the Hodges-Lehmann ratio with
// the verdict's interval, as summary.json names it), its change a ratio.
// Where the Go value says Median, Low and High for both, a reader of the
// JSON would not know which estimate it holds.
type findingValueJSON struct {
	Present bool            `json:"present"`
	N       int             `json:"n,omitempty"`
	SI      *analysis.Float `json:"si,omitempty"`
	SILow   *analysis.Float `json:"si_low,omitempty"`
	SIHigh  *analysis.Float `json:"si_high,omitempty"`
	Ratio   *analysis.Float `json:"ratio_hl,omitempty"`
	Low     *analysis.Float `json:"ratio_hl_low,omitempty"`
	High    *analysis.Float `json:"ratio_hl_high,omitempty"`
	Delta   *findingDelta   `json:"delta,omitempty"`
	Outcome string          `json:"outcome,omitempty"`
}

// findingDelta is a finding's change against the baseline's: for an index
// the difference, for a sensitivity the ratio; significant when their
// intervals do not overlap.
type findingDelta struct {
	Difference  *analysis.Float `json:"difference,omitempty"`
	Ratio       *analysis.Float `json:"ratio,omitempty"`
	Significant bool            `json:"significant"`
}

// MarshalJSON writes the row with its values named by its kind
// (findingValueJSON).
func (r FindingRow) MarshalJSON() ([]byte, error) {
	type plain FindingRow
	values := make([]findingValueJSON, len(r.Values))
	for i, v := range r.Values {
		out := findingValueJSON{Present: v.Present, N: v.N, Outcome: v.Outcome}
		if v.Present {
			if r.Kind == KindSubsumption {
				out.SI, out.SILow, out.SIHigh = &v.Median, &v.Low, &v.High
			} else {
				out.Ratio, out.Low, out.High = &v.Median, &v.Low, &v.High
			}
		}
		if d := v.Delta; d != nil {
			out.Delta = &findingDelta{Significant: d.Significant}
			if r.Kind == KindSubsumption {
				out.Delta.Difference = &d.Ratio
			} else {
				out.Delta.Ratio = &d.Ratio
			}
		}
		values[i] = out
	}
	return json.Marshal(struct {
		plain
		Values []findingValueJSON `json:"values"`
	}{plain(r), values})
}
