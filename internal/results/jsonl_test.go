package results

import (
	"bytes"
	"encoding/json"
	"hash/crc32"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/hostview"

	"github.com/qoslab/qoslab/internal/testvm"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// cellRun makes the n records (threads) of one cell run.
// cellRun makes the records of one cell run. Cells of different labels
// differ in a structured field too (their loops), as the runner's do.
func cellRun(cell, target string, repeat, n int) []Record {
	out := make([]Record, n)
	for i := range out {
		out[i] = Record{
			Cell:   cell,
			Params: &catalog.Params{Loops: uint64(crc32.ChecksumIEEE([]byte(cell)))},
			Sample: Sample{Target: target, Workload: "fp", QoS: 33, Threads: n, Repeat: repeat, Index: i,
				StartNs: int64(10 * i), EndNs: 2e9 + int64(i), Work: 2e8, Unit: "loops", Rate: 1e8 + float64(i),
				QoSApplied: 33, QoSFull: true, CPUs: []int{i}, Contention: 2, CPUNs: 1_900_000_000 + int64(i)},
			Metrics:    map[string]float64{"verified": 1},
			RecordedAt: time.Date(2026, 11, 21, 2, 0, repeat, 0, time.UTC),
		}
	}
	return out
}

func appendBytes(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(s)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func TestAppendAndRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), SamplesFile)
	log, torn, err := OpenSampleLog(path)
	require.NoError(t, err)
	assert.Nil(t, torn)
	first, second := cellRun("host/fp/33/2", "host", 1, 2), cellRun("vm/fp/33/3", "vm", 1, 3)
	second[0].RecordedAt = time.Time{}
	require.NoError(t, log.Append(first...))
	require.NoError(t, log.Append(second...))
	require.NoError(t, log.Append(), "nothing to append is not an error")
	require.NoError(t, log.Close())

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	require.Len(t, lines, 5, "one line per record")
	var line map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &line))
	for _, k := range []string{"schema_version", "cell", "run_records", "target", "repeat", "workload", "rate", "metrics", "recorded_at", "cpu_ns"} {
		assert.Contains(t, line, k)
	}
	assert.EqualValues(t, 1_900_000_000, line["cpu_ns"])
	assert.Equal(t, "host/fp/33/2", line["cell"])
	assert.EqualValues(t, 2, line["run_records"])

	recs, torn, err := ReadSamples(path)
	require.NoError(t, err)
	assert.Nil(t, torn)
	require.Len(t, recs, 5)
	for i, want := range append(first, second...) {
		got := recs[i]
		assert.Equal(t, SchemaVersion, got.SchemaVersion)
		if i == 2 {
			assert.WithinDuration(t, time.Now(), got.RecordedAt, time.Minute, "an unset time is stamped")
			got.RecordedAt = want.RecordedAt
		}
		want.SchemaVersion = SchemaVersion
		want.RunRecords = map[bool]int{true: 2, false: 3}[i < 2]
		assert.Equal(t, want, got, "record %d", i)
	}
	assert.Equal(t, "vm", Samples(recs)[4].Target)
}

func TestAppendRefuses(t *testing.T) {
	path := filepath.Join(t.TempDir(), SamplesFile)
	log, _, err := OpenSampleLog(path)
	require.NoError(t, err)
	defer log.Close()

	mixed := append(cellRun("host/fp/33/1", "host", 1, 1), cellRun("host/fp/33/1", "host", 2, 1)...)
	assert.ErrorContains(t, log.Append(mixed...), "one cell run at a time")
	assert.ErrorContains(t, log.Append(cellRun("", "host", 1, 1)...), "no cell name")
	nan := cellRun("host/fp/33/2", "host", 1, 2)
	nan[1].Rate = math.NaN()
	err = log.Append(nan...)
	assert.ErrorContains(t, err, "unsupported value: NaN")
	assert.ErrorContains(t, err, "thread 1")

	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Zero(t, fi.Size(), "a refused cell run writes nothing")

	require.NoError(t, log.Close())
	assert.ErrorContains(t, log.Append(cellRun("c", "host", 1, 1)...), "closed")
}

// sampleFile writes lines (each given its newline unless it is the torn
// last one) and returns the path.
func sampleFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), SamplesFile)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

func lines(recs []Record) string {
	var b bytes.Buffer
	for _, r := range recs {
		r.SchemaVersion = SchemaVersion
		if r.RunRecords == 0 {
			r.RunRecords = r.Threads
		}
		line, err := json.Marshal(r)
		if err != nil {
			panic(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

func TestReadSamplesTornTail(t *testing.T) {
	whole := lines(cellRun("a", "host", 1, 2))
	threeOfThree := cellRun("b", "host", 1, 3)
	partial := lines(threeOfThree[:2]) // whole lines of a run that lost its third
	tornLine := lines(threeOfThree[2:3])
	tornLine = tornLine[:len(tornLine)/2]
	for _, tc := range []struct {
		name    string
		content string
		records int
		torn    *TornTail
	}{
		{"clean", whole, 2, nil},
		{"empty", "", 0, nil},
		{"trailing blank line", whole + "\n", 2, nil},
		{"torn line", whole + tornLine, 2, &TornTail{Line: 3, Offset: int64(len(whole)), Bytes: int64(len(tornLine))}},
		{"complete json without its newline", whole + strings.TrimSuffix(lines(cellRun("c", "host", 1, 1)), "\n"), 2,
			&TornTail{Line: 3, Offset: int64(len(whole)), Bytes: int64(len(lines(cellRun("c", "host", 1, 1))) - 1)}},
		{"run without its last record", whole + partial, 2, &TornTail{Line: 3, Offset: int64(len(whole)), Bytes: int64(len(partial)), Records: 2}},
		{"run torn in its last record", whole + partial + tornLine, 2,
			&TornTail{Line: 3, Offset: int64(len(whole)), Bytes: int64(len(partial) + len(tornLine)), Records: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := sampleFile(t, tc.content)
			recs, torn, err := ReadSamples(path)
			require.NoError(t, err)
			assert.Len(t, recs, tc.records)
			if tc.torn == nil {
				assert.Nil(t, torn)
				return
			}
			tc.torn.Path = path
			assert.Equal(t, tc.torn, torn)
			assert.Contains(t, torn.String(), "line 3")
		})
	}
}

// Every minor of schema 1 reads: a 1.0 record (parameters in its label),
// a 1.1 record (params, no CPU time) and a 1.2 record (cpu_ns). A record
// without cpu_ns, and one written with none, has its CPU time not
// recorded (0).
func TestReadSamplesOfEverySchemaMinor(t *testing.T) {
	const (
		v10 = `{"schema_version":"1.0","cell":"host fp qos=33 threads=1 loops=5000000","run_records":1,"target":"host","workload":"fp","qos":33,"threads":1,"repeat":1,"index":0,` +
			`"start_ns":4451,"end_ns":16338446,"work":5000000,"unit":"loops","rate":306110048.3990598,"qos_applied":33,"qos_full":true,"cpus":[1],"contention":2,"recorded_at":"2026-11-21T02:21:32.856797286Z"}`
		v11 = `{"schema_version":"1.1","cell":"host fp qos=33 threads=1 duration=1s","run_records":1,"params":{"duration_ns":1000000000},"target":"host","workload":"fp","qos":33,"threads":1,"repeat":1,"index":0,` +
			`"start_ns":5000,"end_ns":1000100000,"work":300000000,"unit":"loops","rate":299970003,"qos_applied":33,"qos_full":true,"cpus":[0],"contention":2,"duration_ns":1000000000,"recorded_at":"2026-11-25T10:00:00Z"}`
		v12 = `{"schema_version":"1.2","cell":"host fp qos=9 threads=1 duration=1s","run_records":1,"params":{"duration_ns":1000000000},"target":"host","workload":"fp","qos":9,"threads":1,"repeat":1,"index":0,` +
			`"start_ns":5000,"end_ns":1000100000,"work":1500000,"unit":"loops","rate":1499850,"qos_applied":9,"qos_full":true,"cpus":[0],"contention":2,"duration_ns":1000000000,"cpu_ns":4821337,"recorded_at":"2026-11-28T10:00:00Z"}`
	)
	recs, torn, err := ReadSamples(sampleFile(t, v10+"\n"+v11+"\n"+v12+"\n"))
	require.NoError(t, err)
	require.Nil(t, torn)
	require.Len(t, recs, 3)
	assert.Equal(t, []string{"1.0", "1.1", "1.2"}, []string{recs[0].SchemaVersion, recs[1].SchemaVersion, recs[2].SchemaVersion})
	assert.Equal(t, []int64{0, 0, 4821337}, []int64{recs[0].CPUNs, recs[1].CPUNs, recs[2].CPUNs})
	assert.Equal(t, uint64(5000000), recs[0].RunKey().Loops, "1.0: the parameters from the label")
	assert.Equal(t, time.Second, recs[1].RunKey().Duration)

	// Written again by this build (1.3), the CPU time round-trips, and a
	// record without one is written without cpu_ns.
	path := filepath.Join(t.TempDir(), SamplesFile)
	log, _, err := OpenSampleLog(path)
	require.NoError(t, err)
	for _, r := range recs {
		require.NoError(t, log.Append(r))
	}
	require.NoError(t, log.Close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(b), `"cpu_ns"`), "only the record with a CPU time has cpu_ns")
	assert.Equal(t, 3, strings.Count(string(b), `"schema_version":"`+SchemaVersion+`"`), "records are written in this build's schema")
	again, _, err := ReadSamples(path)
	require.NoError(t, err)
	require.Len(t, again, 3)
	for i := range recs {
		assert.Equal(t, SchemaVersion, again[i].SchemaVersion)
		assert.Equal(t, recs[i].Sample, again[i].Sample)
	}
}

// TestTornAtEveryByte cuts a cell run short at every byte, as a kill in the
// middle of its write can: the runs before it are always read whole and the
// cut one never.
func TestTornAtEveryByte(t *testing.T) {
	before := lines(cellRun("a", "host", 1, 2))
	run := lines(cellRun("b", "host", 1, 3))
	for cut := 1; cut < len(run); cut++ {
		recs, torn, err := parseSamples("samples.jsonl", []byte(before+run[:cut]))
		require.NoError(t, err, "cut at %d", cut)
		require.Len(t, recs, 2, "cut at %d", cut)
		require.NotNil(t, torn, "cut at %d", cut)
		require.Equal(t, int64(len(before)), torn.Offset, "cut at %d", cut)
		require.Equal(t, int64(cut), torn.Bytes, "cut at %d", cut)
	}
}

func TestReadSamplesRefusesDamageInTheMiddle(t *testing.T) {
	whole := lines(cellRun("a", "host", 1, 1))
	three := cellRun("b", "host", 1, 3)
	for _, tc := range []struct {
		name, content string
		want          []string
	}{
		{"garbage", whole + "not json\n" + whole, []string{"line 2 is not a sample record", "damaged before its end"}},
		{"torn line buried", whole + strings.TrimSuffix(whole, "}\n") + "\n" + whole, []string{"line 2"}},
		{"newer major", whole + strings.Replace(whole, `"schema_version":"`+SchemaVersion+`"`, `"schema_version":"2.0"`, 1), []string{"line 2", "schema 2.0", "reads 1.x"}},
		{"newer major with a changed field", whole + `{"schema_version":"2.0","cell":{"new":"shape"}}` + "\n" + whole, []string{"line 2", "schema 2.0"}},
		{"torn run buried", whole + lines(three[:2]) + whole, []string{"line 2", `cell run host fp qos=33 threads=3 loops=`, `repeat=1 ("b") has 2 of its 3 records`, "lines 2-3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := sampleFile(t, tc.content)
			_, _, err := ReadSamples(path)
			require.Error(t, err)
			assert.ErrorContains(t, err, path)
			for _, w := range tc.want {
				assert.ErrorContains(t, err, w)
			}
			_, _, err = OpenSampleLog(path)
			assert.Error(t, err, "nothing is appended to a damaged file")
		})
	}
}

// damagedRun is one record of a cell run "d" (host fp qos=33 threads=1
// loops=1000 repeat=2) as the test makes it.
func damagedRun(change func(*Record)) string {
	r := cellRun("d", "host", 2, 1)
	r[0].Params.Loops = 1000
	change(&r[0])
	return lines(r)
}

// A 1.2 record has no host view (not recorded); a 1.3 record's reads back
// whole, and is written again as it was.
func TestReadSamplesWithAndWithoutHostView(t *testing.T) {
	const (
		v12 = `{"schema_version":"1.2","cell":"vm fp qos=9 threads=1 duration=1s","run_records":1,"params":{"duration_ns":1000000000},"target":"vm","workload":"fp","qos":9,"threads":1,"repeat":1,"index":0,` +
			`"start_ns":5000,"end_ns":1000100000,"work":1500000,"unit":"loops","rate":1499850,"qos_applied":9,"qos_full":true,"cpus":[0],"contention":2,"duration_ns":1000000000,"cpu_ns":4821337,"recorded_at":"2026-11-28T10:00:00Z"}`
		v13 = `{"schema_version":"1.3","cell":"vm fp qos=9 threads=1 duration=1s","run_records":1,"params":{"duration_ns":1000000000},"target":"vm","workload":"fp","qos":9,"threads":1,"repeat":2,"index":0,` +
			`"start_ns":5000,"end_ns":1000100000,"work":1500000,"unit":"loops","rate":1499850,"qos_applied":9,"qos_full":true,"cpus":[0],"contention":2,"duration_ns":1000000000,"cpu_ns":4821337,` +
			`"host_view":{"wall_ns":1010000000,"host_cpus":2,"vcpus":[{"index":0,"tid":4250,"run_ns":370000000,"wait_ns":600000000},{"index":1,"tid":4251,"run_ns":380000000,"wait_ns":590000000}],` +
			`"vm_process":{"pid":4242,"name":"qemu-system-x86","cpu_ns":800000000},"own_cpu_ns":1300000000,"other_cpu_ns":650000000,"processes":141,` +
			`"others":[{"pid":777,"name":"cc1","cpu_ns":400000000}],"notes":["a note"]},"recorded_at":"2026-11-29T10:00:00Z"}`
	)
	path := sampleFile(t, v12+"\n"+v13+"\n")
	recs, torn, err := ReadSamples(path)
	require.NoError(t, err)
	require.Nil(t, torn)
	require.Len(t, recs, 2)
	assert.Nil(t, recs[0].HostView, "1.2: not recorded")
	assert.Equal(t, &hostview.Use{WallNs: 1010000000, HostCPUs: 2,
		VCPUs:    []hostview.VCPU{{Index: 0, TID: 4250, RunNs: 370000000, WaitNs: 600000000}, {Index: 1, TID: 4251, RunNs: 380000000, WaitNs: 590000000}},
		VM:       &hostview.Process{PID: 4242, Name: "qemu-system-x86", CPUNs: 800000000},
		OwnCPUNs: 1300000000, OtherCPUNs: 650000000, Processes: 141,
		Others: []hostview.Process{{PID: 777, Name: "cc1", CPUNs: 400000000}},
		Notes:  []string{"a note"}}, recs[1].HostView)

	again := filepath.Join(t.TempDir(), SamplesFile)
	log, _, err := OpenSampleLog(again)
	require.NoError(t, err)
	for _, r := range recs {
		require.NoError(t, log.Append(r))
	}
	require.NoError(t, log.Close())
	b, err := os.ReadFile(again)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(b), `"host_view"`), "a record without a view is written without host_view")
	back, _, err := ReadSamples(again)
	require.NoError(t, err)
	assert.Equal(t, recs[1].HostView, back[1].HostView)
}

// The cases the audit built: a record no measurement gives (today's reader
// took it for a thread that did no work) and a whole last line that is not
// JSON (today's reader took it for a crash's torn tail). Each is refused
// as damage with exactly this line, by a reader and by a resume alike,
// and the refused file is left as it was.
func TestReadSamplesRefusesDamage(t *testing.T) {
	whole := lines(cellRun("a", "host", 1, 2))
	const run = "cell run host fp qos=33 threads=1 loops=1000 repeat=2 thread 0"
	const byHand = ", which no measurement gives: the line was changed after it was written; remove or repair it by hand"
	const notTorn = " but is whole, ending in its newline: a crash while appending leaves a last line without one, " +
		"so the file is damaged, not torn; remove or repair that line by hand"
	for _, tc := range []struct {
		name, content, want string
	}{
		{"end before start", whole + damagedRun(func(r *Record) { r.StartNs, r.EndNs = 2_000_000_000, 1_500_000_000 }) + whole,
			" line 3: " + run + " is damaged: it ends before it starts (start_ns 2000000000, end_ns 1500000000)" + byHand},
		{"negative work, last line", whole + damagedRun(func(r *Record) { r.Work, r.Rate = -2e8, -1e8 }),
			" line 3: " + run + " is damaged: its work is negative (-2e+08); its rate is negative (-1e+08)" + byHand},
		{"negative CPU time", damagedRun(func(r *Record) { r.CPUNs = -5 }),
			" line 1: " + run + " is damaged: its CPU time is negative (cpu_ns -5)" + byHand},
		{"CPU time past its interval", whole + damagedRun(func(r *Record) { r.StartNs, r.EndNs, r.CPUNs = 0, 1e9, 1.6e9 }),
			" line 3: " + run + " is damaged: its CPU time is more than its own interval (cpu_ns 1600000000, end_ns - start_ns 1000000000; one thread gets at most 1020000000 there)" + byHand},
		{"a vCPU that ran longer than the cell run", damagedRun(func(r *Record) {
			r.HostView = &hostview.Use{WallNs: 1e9, HostCPUs: 2, VCPUs: []hostview.VCPU{{Index: 1, TID: 9, RunNs: 2e9}}}
		}),
			" line 1: " + run + " is damaged: its host_view: vCPU 1 ran 2000000000 ns and waited 0 ns in 1000000000 ns (at most 1020000000 with the tolerance)" + byHand},
		{"negative other CPU time", damagedRun(func(r *Record) { r.HostView = &hostview.Use{WallNs: 1e9, HostCPUs: 2, OtherCPUNs: -3, Processes: 5} }),
			" line 1: " + run + " is damaged: its host_view: other_cpu_ns is negative (-3)" + byHand},
		{"NaN rate", whole + strings.Replace(damagedRun(func(*Record) {}), `"rate":100000000`, `"rate":NaN`, 1),
			" line 3, its last, is not a sample record (invalid character 'N' looking for beginning of value)" + notTorn},
		{"infinite rate", whole + strings.Replace(damagedRun(func(*Record) {}), `"rate":100000000`, `"rate":1e999`, 1),
			" line 3, its last, is not a sample record (json: cannot unmarshal number 1e999 into Go struct field Record.Sample.rate of type float64)" + notTorn},
		{"whole last line not JSON", whole + "not json\n",
			" line 3, its last, is not a sample record (invalid character 'o' in literal null (expecting 'u'))" + notTorn},
		{"whole last line of zeros", whole + "\x00\x00\x00}\n",
			" line 3, its last, is not a sample record (invalid character '\\x00' looking for beginning of value)" + notTorn},
		{"whole last line, blank lines after it", whole + "{\"schema_vers\n\n \n",
			" line 3, its last, is not a sample record (unexpected end of JSON input)" + notTorn},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := sampleFile(t, tc.content)
			_, _, err := ReadSamples(path)
			require.Error(t, err)
			assert.Equal(t, path+tc.want, err.Error())

			_, _, err = OpenSampleLog(path)
			require.Error(t, err, "nothing is appended to a damaged file")
			assert.Equal(t, path+tc.want, err.Error())
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tc.content, string(b), "the refused file is left as it was: nothing cut off")
		})
	}
}

// Append never writes what a reader would refuse as damage (the whole file
// would be refused with it), and writes nothing of that cell run.
func TestAppendRefusesImpossibleRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), SamplesFile)
	log, _, err := OpenSampleLog(path)
	require.NoError(t, err)
	defer log.Close()
	bad := cellRun("host/fp/33/2", "host", 1, 2)
	bad[1].StartNs, bad[1].EndNs = 10, 5
	assert.EqualError(t, log.Append(bad...), `append cell "host/fp/33/2" repeat 1 to `+path+
		`: record 1 (thread 1) cannot be a measurement: it ends before it starts (start_ns 10, end_ns 5); nothing of the cell run was written`)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Zero(t, fi.Size())
}

func TestOpenSampleLogCutsTornTail(t *testing.T) {
	whole := lines(cellRun("a", "host", 1, 1))
	partial := lines(cellRun("b", "host", 1, 2)[:1])
	path := sampleFile(t, whole+partial+`{"schema_vers`)
	log, torn, err := OpenSampleLog(path)
	require.NoError(t, err)
	require.NotNil(t, torn)
	assert.Equal(t, 1, torn.Records)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, int64(len(whole)), fi.Size(), "the torn end is cut off before anything is appended")

	require.NoError(t, log.Append(cellRun("b", "host", 1, 2)...))
	require.NoError(t, log.Close())
	recs, torn, err := ReadSamples(path)
	require.NoError(t, err)
	assert.Nil(t, torn)
	assert.Len(t, recs, 3)
	assert.Equal(t, map[string]int{"a": 1, "b": 1}, finishedCells(recs))
}

func TestFinishedCells(t *testing.T) {
	var recs []Record
	for _, r := range [][]Record{
		cellRun("host/fp/33/2", "host", 1, 2),
		cellRun("host/fp/33/2", "host", 3, 2),
		cellRun("host/fp/33/2", "host", 2, 2),
		cellRun("vm/fp/33/2", "vm", 1, 2),
		cellRun("vm/fp/33/4", "vm", 1, 4)[:3], // torn: not finished
	} {
		for i := range r {
			r[i].RunRecords = len(r)
		}
		recs = append(recs, r...)
	}
	recs[len(recs)-1].RunRecords = 4
	recs[len(recs)-2].RunRecords = 4
	recs[len(recs)-3].RunRecords = 4
	assert.Equal(t, map[string][]int{"host/fp/33/2": {1, 2, 3}, "vm/fp/33/2": {1}}, FinishedRepeats(recs))
	assert.Equal(t, map[string]int{"host/fp/33/2": 3, "vm/fp/33/2": 1}, finishedCells(recs))
	assert.Empty(t, finishedCells(nil))
}

// TestKilledMidAppend kills a process that appends large cell runs (4 MB, so
// that the kill often lands inside a write) and checks that what it leaves
// is always readable and, once reopened, appendable.
func TestKilledMidAppend(t *testing.T) {
	if path := os.Getenv("QOSLAB_TEST_APPEND_FOREVER"); path != "" {
		appendForever(path)
		return
	}
	testvm.Slow(t, "starts a child process")
	for round := range 3 {
		path := filepath.Join(t.TempDir(), SamplesFile)
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledMidAppend$")
		cmd.Env = append(os.Environ(), "QOSLAB_TEST_APPEND_FOREVER="+path)
		require.NoError(t, cmd.Start())
		// Wait until it has written something, then kill it at once.
		deadline := time.Now().Add(10 * time.Second)
		for {
			fi, err := os.Stat(path)
			if err == nil && fi.Size() > int64(round+1)<<20 || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Millisecond)
		}
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		_ = cmd.Wait()

		recs, torn, err := ReadSamples(path)
		require.NoError(t, err, "round %d", round)
		fi, err := os.Stat(path)
		require.NoError(t, err)
		if torn != nil {
			t.Logf("round %d: %s", round, torn)
			assert.Equal(t, fi.Size(), torn.Offset+torn.Bytes, "the torn end runs to the end of the file")
		}
		for cell, n := range finishedCells(recs) {
			assert.Equal(t, 1, n, cell)
		}
		assert.Len(t, recs, 64*len(finishedCells(recs)), "only whole cell runs are read")
		log, _, err := OpenSampleLog(path)
		require.NoError(t, err)
		require.NoError(t, log.Append(cellRun("after", "host", 1, 2)...))
		require.NoError(t, log.Close())
		again, torn, err := ReadSamples(path)
		require.NoError(t, err)
		assert.Nil(t, torn)
		assert.Len(t, again, len(recs)+2)
	}
}

func appendForever(path string) {
	log, _, err := OpenSampleLog(path)
	if err != nil {
		panic(err)
	}
	detail := strings.Repeat("x", 64000)
	for i := 0; ; i++ {
		run := cellRun("cell-"+strconv.Itoa(i), "host", 1, 64)
		for j := range run {
			run[j].QoSDetail = detail
		}
		if err := log.Append(run...); err != nil {
			panic(err)
		}
	}
}

// BenchmarkAppend measures what syncing every cell run costs: one record (a
// single-thread cell) and eight (an eight-thread cell) per append.
func BenchmarkAppend(b *testing.B) {
	for _, n := range []int{1, 8} {
		b.Run(strconv.Itoa(n)+"records", func(b *testing.B) {
			log, _, err := OpenSampleLog(filepath.Join(b.TempDir(), SamplesFile))
			require.NoError(b, err)
			defer log.Close()
			run := cellRun("host/fp/33/8", "host", 1, n)
			b.ResetTimer()
			for b.Loop() {
				if err := log.Append(run...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Two runs appending the same cell run to one directory leave duplicate
// keys: every reader refuses them, naming both lines, rather than merging
// them into inflated rates.
func TestReadersRefuseDuplicateRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), SamplesFile)
	log, _, err := OpenSampleLog(path)
	require.NoError(t, err)
	rec := func(index int) Record {
		return Record{Cell: "host fp qos=9 threads=2 loops=10", Sample: Sample{Target: "host", Workload: "fp", QoS: 9, Threads: 2, Repeat: 1, Index: index, EndNs: 1e9, Work: 10, Unit: "loops", Rate: 10}}
	}
	require.NoError(t, log.Append(rec(0), rec(1)))
	require.NoError(t, log.Append(rec(0), rec(1)))
	require.NoError(t, log.Close())

	_, _, err = ReadSamples(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `line 3 records cell run host fp qos=9 threads=2 loops=10 repeat=1 thread 0 again (first on line 1): two runs wrote into this directory at once`)
	_, _, err = OpenSampleLog(path)
	assert.ErrorContains(t, err, "again (first on line 1)", "resume refuses too")
}

// A cell run copied by hand with its free-text label changed (and its
// rates inflated) is still the same cell run by its structured fields:
// readers refuse it instead of merging it into the cell.
func TestReadersRefuseARelabelledCopy(t *testing.T) {
	d, err := Create(t.TempDir(), "copied", time.Now())
	require.NoError(t, err)
	path := filepath.Join(d.Path, SamplesFile)
	log, _, err := OpenSampleLog(path)
	require.NoError(t, err)
	run := cellRun("host fp qos=33 threads=2 loops=200000000", "host", 1, 2)
	require.NoError(t, log.Append(run...))
	forged := cellRun("host fp qos=33 threads=2 loops=200000000 (copy)", "host", 1, 2)
	for i := range forged {
		forged[i].Params = run[i].Params
		forged[i].Rate *= 100
	}
	require.NoError(t, log.Append(forged...))
	require.NoError(t, log.Close())

	_, _, err = ReadSamples(path)
	require.Error(t, err)
	assert.ErrorContains(t, err, "line 3 records cell run host fp qos=33 threads=2 loops=")
	assert.ErrorContains(t, err, `again (first on line 1, labelled "host fp qos=33 threads=2 loops=200000000" there and "host fp qos=33 threads=2 loops=200000000 (copy)" here)`)
	_, err = Load(d.Path)
	assert.ErrorContains(t, err, "again (first on line 1", "show, report, plot and compare load through Load")
}
