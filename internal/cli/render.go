package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/units"
	"github.com/qoslab/qoslab/internal/version"
)

func versionString() string { return version.String() }

// infoJSON keeps an agent's Info as JSON with the protocol's field names.
func infoJSON(info *agentpb.InfoReply) json.RawMessage {
	b, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(info)
	if err != nil {
		return json.RawMessage(fmt.Sprintf("{%q: %q}", "error", err.Error()))
	}
	return b
}

// describeInfo is one line about a target.
func describeInfo(i *agentpb.InfoReply) string {
	virt := "not virtualized"
	if i.GetVirtualized() {
		virt = "virtualized (" + i.GetVirtualization() + ")"
	}
	levels := make([]string, 0, len(i.GetPerfLevels()))
	for _, l := range i.GetPerfLevels() {
		levels = append(levels, fmt.Sprintf("%d x %s", l.GetLogicalCpus(), l.GetName()))
	}
	lv := ""
	if len(levels) > 1 {
		lv = " [" + strings.Join(levels, ", ") + "]"
	}
	return fmt.Sprintf("%s, %d logical CPUs%s, %.1f GiB, %s %s/%s, %s, agent %s",
		i.GetCpuModel(), i.GetLogicalCpus(), lv, float64(i.GetMemoryBytes())/(1<<30), i.GetOsVersion(), i.GetOs(), i.GetArch(), virt, i.GetAgentVersion())
}

func renderBench(w io.Writer, format string, r *BenchReport) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case "csv":
		return results.WriteCSV(w, r.Samples)
	case "markdown":
		return renderCells(w, r, true)
	default:
		return renderCells(w, r, false)
	}
}

// rateUnit scales a unit for display: bytes as MB/s, counts with SI prefixes.
func rateUnit(unit string) (string, float64) {
	if unit == "bytes" {
		return "MB/s", 1e6
	}
	return unit + "/s", 1
}

func siFormat(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	a := math.Abs(x)
	switch {
	case a >= 1e9:
		return fmt.Sprintf("%.4gG", x/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.4gM", x/1e6)
	case a >= 1e3:
		return fmt.Sprintf("%.4gk", x/1e3)
	}
	return fmt.Sprintf("%.4g", x)
}

func spread(s analysis.Summary, scale float64) string {
	if s.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%s [%s..%s]", siFormat(s.Median/scale), siFormat(s.Min/scale), siFormat(s.Max/scale))
}

// appliedText says which class the threads ran at: the asked class's name when
// it took fully, a * when part of its OS mapping did not, a ! when the threads
// read back as another class.
func appliedText(c analysis.Cell) string {
	var names []string
	for _, a := range c.QoSApplied {
		names = append(names, qos.Class(a).String())
	}
	s := strings.Join(names, "+")
	switch {
	case len(c.QoSApplied) != 1 || c.QoSApplied[0] != c.QoS:
		return s + " !"
	case c.QoSPartial > 0:
		return s + " *"
	}
	return s
}

// cellRows lays cells out one per row, or, with several targets, one row per
// (workload, qos, threads, phase) with the targets side by side and the ratio
// of each target's median total rate to the first target's.
func cellRows(cells []analysis.Cell) (header []string, rows [][]string) {
	var targets []string
	seen := map[string]bool{}
	for _, c := range cells {
		if !seen[c.Target] {
			seen[c.Target] = true
			targets = append(targets, c.Target)
		}
	}
	phaseText := func(p string) string {
		if p == "" {
			return "-"
		}
		return p
	}
	if len(targets) < 2 {
		header = []string{"target", "workload", "qos", "threads", "phase", "n", "seconds median [min..max]", "total rate", "per-thread rate", "unit", "qos applied"}
		for _, c := range cells {
			unit, scale := rateUnit(c.Unit)
			rows = append(rows, []string{
				c.Target, c.Workload, fmt.Sprintf("%d %s", c.QoS, qos.Class(c.QoS)), fmt.Sprint(c.Threads), phaseText(c.Phase),
				fmt.Sprint(c.TotalRate.N),
				fmt.Sprintf("%.3f [%.3f..%.3f]", c.Seconds.Median, c.Seconds.Min, c.Seconds.Max),
				spread(c.TotalRate, scale), spread(c.ThreadRate, scale), unit, appliedText(c),
			})
		}
		return header, rows
	}
	type key struct {
		workload, phase string
		qos, threads    int
	}
	var order []key
	byKey := map[key]map[string]analysis.Cell{}
	for _, c := range cells {
		k := key{c.Workload, c.Phase, c.QoS, c.Threads}
		if byKey[k] == nil {
			byKey[k] = map[string]analysis.Cell{}
			order = append(order, k)
		}
		byKey[k][c.Target] = c
	}
	header = []string{"workload", "qos", "threads", "phase", "n"}
	for _, t := range targets {
		header = append(header, t+" seconds", t+" total rate")
	}
	for _, t := range targets[1:] {
		header = append(header, t+"/"+targets[0])
	}
	header = append(header, "unit", "qos applied")
	for _, k := range order {
		row := []string{k.workload, fmt.Sprintf("%d %s", k.qos, qos.Class(k.qos)), fmt.Sprint(k.threads), phaseText(k.phase)}
		var ns, applied []string
		unit := "-"
		for _, t := range targets {
			c, ok := byKey[k][t]
			if !ok {
				continue
			}
			ns = append(ns, fmt.Sprint(c.TotalRate.N))
			applied = append(applied, t+" "+appliedText(c))
		}
		row = append(row, strings.Join(ns, "/"))
		for _, t := range targets {
			c, ok := byKey[k][t]
			if !ok {
				row = append(row, "-", "-")
				continue
			}
			var scale float64
			unit, scale = rateUnit(c.Unit)
			row = append(row, fmt.Sprintf("%.3f", c.Seconds.Median), spread(c.TotalRate, scale))
		}
		base, okBase := byKey[k][targets[0]]
		for _, t := range targets[1:] {
			c, ok := byKey[k][t]
			if !ok || !okBase || base.TotalRate.N == 0 || base.TotalRate.Median == 0 {
				row = append(row, "-")
				continue
			}
			row = append(row, fmt.Sprintf("%.3fx", c.TotalRate.Median/base.TotalRate.Median))
		}
		row = append(row, unit, strings.Join(applied, ", "))
		rows = append(rows, row)
	}
	return header, rows
}

func renderCells(w io.Writer, r *BenchReport, markdown bool) error {
	cells := analysis.Cells(r.Samples)
	header, rows := cellRows(cells)
	notes := map[string]bool{}
	for _, c := range cells {
		for _, reason := range c.QoSReasons {
			notes[fmt.Sprintf("%s %s: %s", c.Target, qos.Class(c.QoS), reason)] = true
		}
	}
	if len(rows) == 0 {
		fmt.Fprintln(w, "no cells finished")
	} else if markdown {
		fmt.Fprintln(w, "| "+strings.Join(header, " | ")+" |")
		fmt.Fprintln(w, "|"+strings.Repeat("---|", len(header)))
		for _, row := range rows {
			fmt.Fprintln(w, "| "+strings.Join(row, " | ")+" |")
		}
	} else {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, strings.ToUpper(strings.Join(header, "\t")))
		for _, row := range rows {
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	var lines []string
	for n := range notes {
		lines = append(lines, n)
	}
	sort.Strings(lines)
	bullet := "  "
	if markdown {
		bullet = "- "
		fmt.Fprintln(w)
	}
	if len(lines) > 0 {
		fmt.Fprintln(w, "qos applied: * = part of the class's OS mapping did not take effect, ! = threads ran at another class:")
		for _, l := range lines {
			fmt.Fprintln(w, bullet+l)
		}
	}
	runNotes := map[string]bool{}
	for _, run := range r.Runs {
		for _, n := range run.Notes {
			runNotes[n] = true
		}
	}
	lines = lines[:0]
	for n := range runNotes {
		lines = append(lines, n)
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintln(w, bullet+"note: "+l)
	}
	if r.Contention != nil {
		fmt.Fprintf(w, "%scontention: %s at %s ran on the host, outside the agents, throughout\n", strings.TrimSpace(bullet+" "), units.Plural(r.Contention.Threads, "spinner thread"), qos.Default)
	}
	if r.Error != "" {
		fmt.Fprintf(w, "incomplete: %s\n", r.Error)
	}
	return nil
}
