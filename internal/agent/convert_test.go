package agent

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/workload"
)

// A record crosses the wire whole, its CPU time included: encoded to
// bytes and decoded back, it is the record the workload made. A record
// without CPU time (not recorded) stays without.
func TestRecordRoundTrip(t *testing.T) {
	for _, rec := range []workload.Record{
		{Index: 1, StartNs: 120, EndNs: 1_000_000_120, Work: 3 << 20, Rate: 3 << 20, CPUNs: 987_654_321,
			QoS: qos.Applied{Asked: qos.Background, Applied: qos.Background, Reason: "no uclamp"}, CPUs: []int{0, 3}},
		{Index: 2, Phase: "compress", StartNs: 5, EndNs: 9, Work: 1 << 20, Rate: 2.5e14, CPUNs: 4,
			QoS: qos.Applied{Asked: qos.UserInteractive, Applied: qos.UserInteractive, Full: true}, PID: 4242},
		{Index: 0, StartNs: 0, EndNs: 10, Work: 1, Rate: 1e8, QoS: qos.Applied{Asked: qos.Default, Applied: qos.Default, Full: true}},
	} {
		b, err := proto.Marshal(recordToProto(rec))
		require.NoError(t, err)
		var got agentpb.ThreadRecord
		require.NoError(t, proto.Unmarshal(b, &got))
		assert.Equal(t, rec.CPUNs, got.GetCpuNs())
		assert.Equal(t, rec, RecordFromProto(&got))
	}
}

// An agent of protocol 1.2 sends no cpu_ns (field 10): its records read
// with no CPU time, which the results say was not recorded.
func TestRecordFromAnOlderAgent(t *testing.T) {
	old := &agentpb.ThreadRecord{Index: 1, StartNs: 1, EndNs: 2, Work: 3, Rate: 4, Qos: &agentpb.QoSApplied{Asked: 9, Applied: 9}}
	b, err := proto.Marshal(old)
	require.NoError(t, err)
	var got agentpb.ThreadRecord
	require.NoError(t, proto.Unmarshal(b, &got))
	assert.Zero(t, RecordFromProto(&got).CPUNs)
}
