package render

import (
	"math"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/analysis"
)

// The notation of analysis' values: workloads' and sensitivities' names,
// ratios and p values as every output prints them.

// WorkloadText names a workload and, when it differs from the workload's
// own name, its timed phase: "fp", "compress (verify)".
func WorkloadText(workload, phase string) string {
	if phase == "" || phase == workload {
		return workload
	}
	return workload + " (" + phase + ")"
}

// SensitivityName names what the sensitivity (and a verdict, by its Host's) judges:
// its workload and phase (WorkloadText), then its parameters where the
// run measured the workload with more than one set of them:
// "compress size=4194304 ratio=3 codec=zstd level=0 sink=null".
func SensitivityName(s analysis.Sensitivity) string {
	if s.Params == "" {
		return WorkloadText(s.Workload, s.Phase)
	}
	return WorkloadText(s.Workload, s.Phase) + " " + s.Params
}

// FormatRatio renders a ratio with three significant digits (every integer
// digit from 1000 up), trailing zeros dropped and never in exponent form:
// "3.1x", "1.01x", "12.3x", "0.5x"; "n/a" when it is not a number.
func FormatRatio(ratio analysis.Float) string {
	r := float64(ratio)
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return "n/a"
	}
	if r == 0 {
		return "0x"
	}
	decimals := max(0, 2-int(math.Floor(math.Log10(math.Abs(r)))))
	s := strconv.FormatFloat(r, 'f', decimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s + "x"
}

// FormatP renders a p value as "p<0.001" or with two significant digits,
// "p=0.41"; "p=n/a" when there was no test.
func FormatP(p analysis.Float) string {
	switch {
	case p.IsNaN():
		return "p=n/a"
	case p < 0.001:
		return "p<0.001"
	}
	return "p=" + strconv.FormatFloat(float64(p), 'g', 2, 64)
}

// FormatSignificance renders a p value as benchstat does a difference that is
// not significant, "~", and as FormatP otherwise.
func FormatSignificance(p analysis.Float, alpha float64) string {
	if !(float64(p) < alpha) {
		return "~"
	}
	return FormatP(p)
}
