package analysis

import "fmt"

// cellText names a cell in a test's messages and expectations, as
// render.CellText does for people (analysis has no words of its own).
func cellText(k CellKey) string {
	s := k.Target + " " + k.Workload
	if k.Phase != "" && k.Phase != k.Workload {
		s += " " + k.Phase
	}
	s += fmt.Sprintf(" qos=%d threads=%d", k.QoS, k.Threads)
	if k.Params != "" {
		s += " " + k.Params
	}
	return s
}
