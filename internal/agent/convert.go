package agent

import (
	"time"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/workload"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// paramsFromRequest turns a request into workload parameters; validation is
// the workload package's.
func paramsFromRequest(r *agentpb.RunRequest) workload.Params {
	return workload.Params{
		Workload: r.GetWorkload(),
		QoS:      qos.Class(r.GetQos()),
		Threads:  int(r.GetThreads()),
		Loops:    r.GetLoops(),
		Duration: time.Duration(r.GetDurationNs()),
		Size:     int64(min(r.GetSizeBytes(), 1<<62)),
		Ratio:    r.GetRatio(),
		Seed:     r.GetSeed(),
		Codec:    r.GetCodec(),
		Level:    int(r.GetLevel()),
		Sink:     r.GetSink(),
		SinkPath: r.GetSinkPath(),
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
		cpus := make([]uint32, len(rec.CPUs))
		for i, c := range rec.CPUs {
			cpus[i] = uint32(c)
		}
		out.Records = append(out.Records, &agentpb.ThreadRecord{
			Index: uint32(rec.Index), Phase: rec.Phase, StartNs: rec.StartNs, EndNs: rec.EndNs,
			Work: rec.Work, Rate: rec.Rate, Qos: qosToProto(rec.QoS), Cpus: cpus, Pid: int32(rec.PID),
		})
	}
	return out
}
