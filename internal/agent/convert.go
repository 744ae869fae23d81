package agent

import (
	"time"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/workload"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// RequestOf is the request that runs the cell p on an agent, and
// paramsFromRequest reads it back: the one place a cell's workload, class,
// threads, parameters and seed meet the wire.
func RequestOf(p workload.Params) *agentpb.RunRequest {
	return &agentpb.RunRequest{
		Workload: p.Workload, Qos: int32(p.QoS), Threads: uint32(p.Threads), Loops: p.Loops,
		SizeBytes: uint64(p.SizeBytes), Ratio: p.Ratio, Seed: p.Seed, Codec: p.Codec, Level: int32(p.Level),
		Sink: p.Sink, SinkPath: p.SinkPath, DurationNs: int64(p.Duration),
	}
}

// paramsFromRequest turns a request into workload parameters; validation is
// the workload package's.
func paramsFromRequest(r *agentpb.RunRequest) workload.Params {
	return workload.Params{
		Workload: r.GetWorkload(),
		QoS:      qos.Class(r.GetQos()),
		Threads:  int(r.GetThreads()),
		Params: catalog.Params{
			Loops:     r.GetLoops(),
			Duration:  time.Duration(r.GetDurationNs()),
			SizeBytes: int64(min(r.GetSizeBytes(), 1<<62)),
			Ratio:     r.GetRatio(),
			Codec:     r.GetCodec(),
			Level:     int(r.GetLevel()),
			Sink:      r.GetSink(),
			SinkPath:  r.GetSinkPath(),
		},
		Seed: r.GetSeed(),
	}
}

// qosToProto converts an applied class for the wire.
func qosToProto(a qos.Applied) *agentpb.QoSApplied {
	return &agentpb.QoSApplied{Asked: int32(a.Asked), Applied: int32(a.Applied), Full: a.Full, Reason: a.Reason, Detail: a.Detail}
}

// QoSFromProto converts an applied class from the wire.
func QoSFromProto(p *agentpb.QoSApplied) qos.Applied {
	return qos.Applied{Asked: qos.Class(p.GetAsked()), Applied: qos.Class(p.GetApplied()), Full: p.GetFull(), Reason: p.GetReason(), Detail: p.GetDetail()}
}

func resultToProto(workloadName string, r workload.Result) *agentpb.Result {
	out := &agentpb.Result{Metrics: r.Metrics, Notes: r.Notes, Unit: catalog.Lookup(workloadName).Unit}
	for _, rec := range r.Records {
		out.Records = append(out.Records, recordToProto(rec))
	}
	return out
}

// recordToProto converts a thread's (or process's) record for the wire.
func recordToProto(rec workload.Record) *agentpb.ThreadRecord {
	cpus := make([]uint32, len(rec.CPUs))
	for i, c := range rec.CPUs {
		cpus[i] = uint32(c)
	}
	return &agentpb.ThreadRecord{
		Index: uint32(rec.Index), Phase: rec.Phase, StartNs: rec.StartNs, EndNs: rec.EndNs,
		Work: rec.Work, Rate: rec.Rate, Qos: qosToProto(rec.QoS), Cpus: cpus, Pid: int32(rec.PID),
		CpuNs: rec.CPUNs,
	}
}

// RecordFromProto converts a thread's (or process's) record from the wire.
// An agent older than protocol 1.3 sends no CPU time: CPUNs is then 0,
// not recorded.
func RecordFromProto(r *agentpb.ThreadRecord) workload.Record {
	var cpus []int
	if len(r.GetCpus()) > 0 {
		cpus = make([]int, len(r.GetCpus()))
		for i, c := range r.GetCpus() {
			cpus[i] = int(c)
		}
	}
	return workload.Record{
		Index: int(r.GetIndex()), Phase: r.GetPhase(), StartNs: r.GetStartNs(), EndNs: r.GetEndNs(),
		Work: r.GetWork(), Rate: r.GetRate(), CPUNs: r.GetCpuNs(), QoS: QoSFromProto(r.GetQos()),
		CPUs: cpus, PID: int(r.GetPid()),
	}
}
