package render

import (
	"fmt"

	"github.com/qoslab/qoslab/internal/analysis"
)

// OtherWork says what other work took, "" where it took less than the
// floor in every cell run (or was not recorded): "0.2 CPU in the median
// cell run (0.28 CPU at most), 0.1 CPU or more in 54 of 60 (python3, pid
// 26333)".
func OtherWork(w *analysis.OtherWork) string {
	if w == nil || w.Busy == 0 {
		return ""
	}
	t := fmt.Sprintf("%s in the median cell run (%s at most), %s or more in %d of %d",
		cpuText(float64(w.Median)), cpuText(float64(w.Max)), cpuText(analysis.InterferenceOtherFloor), w.Busy, w.Runs)
	if who := othersText(w.Others); who != "" {
		t += " (" + who + ")"
	}
	return t
}

// OtherWorkLine says what other work took beside the verdict and what it
// did to the VM's cell runs:
//
//	other work on the host took 0.2 CPU in the median cell run (0.28 CPU at most), 0.1 CPU or more in 54 of 60 (python3, pid 26333); none of the 36 VM cell runs got clearly less of the host than the run's norm, so none was left out
//
// Empty where the host's processes were not read, or other work took
// less than the floor in every cell run (an idle host: nothing to say).
func OtherWorkLine(v analysis.Verdict) string {
	w := v.OtherWork
	if w == nil || w.Busy == 0 {
		return ""
	}
	line := "other work on the host took " + OtherWork(w)
	switch i := v.Interference; {
	case i == nil || i.Kind == analysis.InterferenceNotRecorded:
		line += "; the VM's vCPU threads were not read, so what it took from them is not known"
	case i.Kind == analysis.InterferenceNone:
		line += fmt.Sprintf("; none of the %d VM cell runs got clearly less of the host than the run's norm, so none was left out", i.Judged)
	default:
		line += fmt.Sprintf("; %d of %d VM cell runs got clearly less of the host than the run's norm (see the warning)", len(i.Runs), i.Judged)
	}
	return line
}
