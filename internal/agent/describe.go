package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
)

// InfoJSON keeps an agent's Info as JSON with the protocol's field names.
func InfoJSON(info *agentpb.InfoReply) json.RawMessage {
	b, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(info)
	if err != nil {
		return json.RawMessage(fmt.Sprintf("{%q: %q}", "error", err.Error()))
	}
	return b
}

// Describe is one line about the machine an agent runs on.
func Describe(i *agentpb.InfoReply) string {
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

// InfoRows lays an agent's Info out as labelled rows, for people.
func InfoRows(i *agentpb.InfoReply) [][2]string {
	virt := "no"
	if i.GetVirtualized() {
		virt = "yes"
	}
	var levels []string
	for _, l := range i.GetPerfLevels() {
		levels = append(levels, fmt.Sprintf("%s: %d CPUs", l.GetName(), l.GetLogicalCpus()))
	}
	return [][2]string{
		{"agent", fmt.Sprintf("%s (protocol %d.%d, pid %d)", i.GetAgentVersion(), i.GetProtocol().GetMajor(), i.GetProtocol().GetMinor(), i.GetPid())},
		{"host", i.GetHostname()},
		{"os", fmt.Sprintf("%s %s/%s", i.GetOsVersion(), i.GetOs(), i.GetArch())},
		{"cpu", i.GetCpuModel()},
		{"logical cpus", fmt.Sprint(i.GetLogicalCpus())},
		{"core types", strings.Join(levels, "; ")},
		{"memory", fmt.Sprintf("%.1f GiB", float64(i.GetMemoryBytes())/(1<<30))},
		{"virtualized", fmt.Sprintf("%s (%s)", virt, i.GetVirtualization())},
		{"qos", i.GetQosSupport()},
		{"workloads", strings.Join(i.GetWorkloads(), ", ")},
		{"codecs", strings.Join(i.GetCodecs(), ", ")},
		{"mmul", i.GetMmulImpl()},
	}
}
