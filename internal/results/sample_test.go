package results

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCSVRoundTrip(t *testing.T) {
	in := []Sample{
		{Target: "host", Workload: "fp", QoS: 9, Threads: 2, Repeat: 1, Index: 0, StartNs: 10, EndNs: 2e9, Work: 2e8, Unit: "loops",
			Rate: 1.0000000005e8, QoSApplied: 9, QoSFull: false, QoSReason: "uclamp unavailable, \"quoted\"", CPUs: []int{0, 1}, Contention: 2, CPUNs: 1_987_654_321},
		{Target: "vm", Workload: "compress", Phase: "compress", QoS: 33, Threads: 1, Repeat: 3, Work: 1 << 30, Unit: "bytes", Rate: 5e8, QoSApplied: 21, PID: 0},
	}
	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, in))
	firstLine, _, _ := strings.Cut(buf.String(), "\n")
	assert.True(t, strings.HasPrefix(firstLine, "target,workload,qos,threads,repeat,index,"), firstLine)
	for _, col := range []string{"start_ns", "end_ns", "work", "rate", "qos_applied"} {
		assert.Contains(t, firstLine, col)
	}
	assert.True(t, strings.HasSuffix(firstLine, ",contention,cpu_ns"), "cpu_ns is appended at the end: %s", firstLine)
	rows := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	require.Len(t, rows, 3)
	assert.True(t, strings.HasSuffix(rows[1], ",2,1987654321"), rows[1])
	assert.True(t, strings.HasSuffix(rows[2], ",0,"), "CPU time not recorded: an empty cpu_ns, not 0: %s", rows[2])
	out, err := ReadCSV(&buf)
	require.NoError(t, err)
	assert.Equal(t, in, out)
}

// A tidy CSV written before schema 1.2 has no cpu_ns column: it reads,
// every CPU time not recorded.
func TestReadCSVOfSchema11(t *testing.T) {
	const csv11 = "target,workload,qos,threads,repeat,index,phase,start_ns,end_ns,work,unit,rate,qos_applied,qos_full,qos_reason,qos_detail,cpus,pid,contention\n" +
		"host,fp,9,2,1,1,,10,2000000010,2e+08,loops,1e+08,9,false,no uclamp,,0 1,0,2\n"
	out, err := ReadCSV(strings.NewReader(csv11))
	require.NoError(t, err)
	assert.Equal(t, []Sample{{Target: "host", Workload: "fp", QoS: 9, Threads: 2, Repeat: 1, Index: 1, StartNs: 10, EndNs: 2000000010,
		Work: 2e8, Unit: "loops", Rate: 1e8, QoSApplied: 9, QoSReason: "no uclamp", CPUs: []int{0, 1}, Contention: 2}}, out)
}

// A CSV row no measurement gives is refused, naming its line, as a
// samples.jsonl line is.
func TestReadCSVRefusesDamagedRows(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, []Sample{
		{Target: "host", Workload: "fp", QoS: 9, Threads: 1, Repeat: 1, StartNs: 10, EndNs: 20, Work: 5, Unit: "loops", Rate: 5e8, CPUNs: 8},
		{Target: "host", Workload: "fp", QoS: 9, Threads: 1, Repeat: 2, StartNs: 10, EndNs: 20, Work: 5, Unit: "loops", Rate: 5e8, CPUNs: 8},
	}))
	for _, tc := range []struct{ name, from, to, want string }{
		{"end before start", ",10,20,5,", ",30,20,5,", "csv line 2: host fp qos=9 threads=1 repeat 1 thread 0 is damaged: it ends before it starts (start_ns 30, end_ns 20), which no measurement gives"},
		{"NaN rate", ",5e+08,", ",NaN,", "csv line 2: host fp qos=9 threads=1 repeat 1 thread 0 is damaged: its rate is NaN, which no measurement gives"},
		{"infinite work", ",5,loops", ",+Inf,loops", "csv line 2: host fp qos=9 threads=1 repeat 1 thread 0 is damaged: its work is +Inf, which no measurement gives"},
		{"negative CPU time", ",8\n", ",-8\n", "csv line 2: host fp qos=9 threads=1 repeat 1 thread 0 is damaged: its CPU time is negative (cpu_ns -8), which no measurement gives"},
		{"more CPU time than its interval", ",8\n", ",10000011\n", "csv line 2: host fp qos=9 threads=1 repeat 1 thread 0 is damaged: its CPU time is more than its own interval (cpu_ns 10000011, end_ns - start_ns 10; one thread gets at most 10000010 there), which no measurement gives"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadCSV(strings.NewReader(strings.Replace(buf.String(), tc.from, tc.to, 1)))
			assert.EqualError(t, err, tc.want)
		})
	}
}

func TestReadCSVRejects(t *testing.T) {
	_, err := ReadCSV(strings.NewReader("a,b\n1,2\n"))
	assert.ErrorContains(t, err, "not qoslab's sample header")

	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, []Sample{{Target: "host", Workload: "fp", Threads: 1}}))
	bad := strings.Replace(buf.String(), "host,fp,0,1", "host,fp,zero,1", 1)
	_, err = ReadCSV(strings.NewReader(bad))
	assert.ErrorContains(t, err, `qos="zero"`)
	assert.ErrorContains(t, err, "line 2")
}

func TestCheckSchema(t *testing.T) {
	assert.NoError(t, checkSchema(SchemaVersion))
	assert.NoError(t, checkSchema("1.7"), "a newer minor of our major is readable")
	assert.ErrorContains(t, checkSchema("2.0"), "not readable")
	assert.ErrorContains(t, checkSchema("x"), "not MAJOR.MINOR")
}

// CSV numbers are the shortest that read back exactly: a round trip loses
// nothing, where 6 significant digits turned 2079123.5 into 2.079e+06.
func TestCSVNumbersRoundTrip(t *testing.T) {
	in := []Sample{
		{Target: "host", Workload: "fp", QoS: 9, Threads: 1, Repeat: 1, Work: 2e6, Unit: "loops", Rate: 5.26e8},
		{Target: "host", Workload: "fp", QoS: 9, Threads: 1, Repeat: 2, Work: 2079123.5, Unit: "loops", Rate: 1234.5},
		{Target: "vm", Workload: "fp", QoS: 33, Threads: 2, Repeat: 1, Work: 1.0 / 3, Unit: "loops", Rate: 123456789.123456789},
	}
	var b strings.Builder
	require.NoError(t, WriteCSV(&b, in))
	assert.Contains(t, b.String(), ",2e+06,loops,5.26e+08,", "shortest: strconv 'g' with precision -1")
	assert.Contains(t, b.String(), ",2.0791235e+06,loops,1234.5,")
	back, err := ReadCSV(strings.NewReader(b.String()))
	require.NoError(t, err)
	require.Len(t, back, len(in))
	for i := range in {
		assert.Equal(t, in[i].Work, back[i].Work)
		assert.Equal(t, in[i].Rate, back[i].Rate)
	}
}

// A thread's CPU time may pass its interval by the clock reads outside it
// and the clocks' rates (CPUTimeSlack, CPUTimeTolerance), never more: the
// audit's thread at 160% of a CPU is damage, one at the limit is not.
func TestCPUTimeBeyondItsInterval(t *testing.T) {
	for _, tc := range []struct {
		name    string
		wall    int64
		cpu     int64
		damaged bool
	}{
		{"a whole CPU", 1e9, 1e9, false},
		{"at the limit", 1e9, 1e9 + 1e7 + 1e7, false},
		{"one ns past it", 1e9, 1e9 + 1e7 + 1e7 + 1, true},
		{"160% of a CPU", 1e9, 1.6e9, true},
		{"a short interval and its clock reads", 1000, 5e6, false},
		{"not recorded", 1e9, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Sample{Target: "host", Workload: "fp", StartNs: 5, EndNs: 5 + tc.wall, Work: 1, Rate: 1, CPUNs: tc.cpu}
			if tc.damaged {
				assert.Contains(t, s.damage(), "its CPU time is more than its own interval")
			} else {
				assert.Empty(t, s.damage())
			}
		})
	}
}
