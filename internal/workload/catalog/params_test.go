package catalog

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// paramsOf are parameters every workload may be given: each kind's, and a
// fixed-duration compute cell where the workload takes one.
func paramsOf(w Workload) []Params {
	switch w.Kind {
	case KindCompression:
		return []Params{
			{SizeBytes: QuickSize, Ratio: DefaultRatio, Codec: DefaultCodec, Sink: SinkNull},
			{SizeBytes: 1 << 30, Ratio: 2.5, Codec: "gzip", Level: 9, Sink: SinkFile, SinkPath: `/scratch dir/"q"`},
		}
	}
	out := []Params{{Loops: w.DefaultLoops}}
	if w.TakesDuration() {
		out = append(out, Params{Duration: 1500 * time.Millisecond})
	}
	return out
}

func TestSeriesKeyTextRoundTripsForEveryWorkload(t *testing.T) {
	for _, w := range All() {
		for _, p := range paramsOf(w) {
			k := SeriesKey{Target: "vm", Workload: w.Name, QoS: 33, Threads: 4, Params: p}
			t.Run(k.String(), func(t *testing.T) {
				got, rest, err := ParseSeriesKey(k.String())
				require.NoError(t, err)
				assert.Equal(t, k, got)
				assert.Empty(t, rest)

				got, rest, err = ParseSeriesKey(k.String() + " repeat=3")
				require.NoError(t, err)
				assert.Equal(t, k, got, "a record's label: the key, then its repeat")
				assert.Equal(t, []string{"repeat=3"}, rest)
			})
		}
	}
}

// The text is part of the results files: these are labels as runs wrote
// them.
func TestSeriesKeyText(t *testing.T) {
	cases := []struct {
		key  SeriesKey
		want string
	}{
		{SeriesKey{Target: "host", Workload: FP, QoS: 9, Threads: 4, Params: Params{Loops: 2e8}}, "host fp qos=9 threads=4 loops=200000000"},
		{SeriesKey{Target: "vm", Workload: Int, QoS: 33, Threads: 1, Params: Params{Duration: time.Second}}, "vm int qos=33 threads=1 duration=1s"},
		{SeriesKey{Target: "host", Workload: Decompress, QoS: 25, Threads: 2, Params: Params{SizeBytes: 8 << 20, Ratio: 3, Codec: "zstd", Sink: "file", SinkPath: "/a b"}},
			`host decompress qos=25 threads=2 size=8388608 ratio=3 codec=zstd level=0 sink=file sink_path="/a b"`},
		// Compression parameters decide the text by the workload's kind, not by which are set.
		{SeriesKey{Target: "host", Workload: Compress, QoS: 9, Threads: 1}, "host compress qos=9 threads=1 size=0 ratio=0 codec= level=0 sink="},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, tc.key.String())
	}
}

func TestParseSeriesKeyNamesWhatItCannotRead(t *testing.T) {
	cases := []struct{ text, problem string }{
		{"host", "want target and workload first"},
		{"host fp qos=x threads=1 loops=1", `qos=x: strconv.Atoi: parsing "x"`},
		{"host fp qos=9 threads=1 duration=soon", "duration=soon"},
		{`host compress qos=9 threads=1 size=1 ratio=3 codec=zstd level=0 sink=file sink_path=/unquoted`, "sink_path /unquoted is not a quoted string"},
	}
	for _, tc := range cases {
		_, _, err := ParseSeriesKey(tc.text)
		require.Error(t, err, tc.text)
		assert.Contains(t, err.Error(), tc.problem)
	}
	// What it can read it still gives: a label of an older run is read as far as it goes.
	k, _, err := ParseSeriesKey("host fp qos=9 threads=x loops=7")
	require.Error(t, err)
	assert.Equal(t, SeriesKey{Target: "host", Workload: FP, QoS: 9, Params: Params{Loops: 7}}, k)
}

func TestParamsTakenKeepsWhatTheWorkloadTakes(t *testing.T) {
	all := Params{Loops: 5, Duration: time.Second, SizeBytes: 9, Ratio: 2, Codec: "lz4", Level: 1, Sink: SinkNull, SinkPath: "/x"}
	assert.Equal(t, Params{Loops: 5, Duration: time.Second}, ParamsTaken(FP, all))
	assert.Equal(t, Params{SizeBytes: 9, Ratio: 2, Codec: "lz4", Level: 1, Sink: SinkNull, SinkPath: "/x"}, ParamsTaken(Compress, all))
}

// Each parameter a spec names is set through its field and named in the
// key's text by the same name, and read back from it.
func TestEveryParamKeyIsInTheKeyText(t *testing.T) {
	for _, pk := range ParamKeys() {
		t.Run(pk.Name, func(t *testing.T) {
			k := SeriesKey{Target: "host", Workload: FP, QoS: 9, Threads: 1}
			if pk.Compression {
				k.Workload, k.Codec = Compress, DefaultCodec
			}
			switch f := pk.Field(&k.Params).(type) {
			case *uint64:
				*f = 7
			case *time.Duration:
				*f = 7 * time.Second
			case *int64:
				*f = 7
			case *float64:
				*f = 7
			case *int:
				*f = 7
			case *string:
				*f = "seven"
			default:
				t.Fatalf("field of type %T", f)
			}
			assert.Contains(t, k.String(), " "+pk.Name+"=")
			got, _, err := ParseSeriesKey(k.String())
			require.NoError(t, err)
			assert.Equal(t, k, got)
		})
	}
}

// sampleText is a value of k, not its default, as a user types it, by its
// field's type.
func sampleText(k ParamKey) string {
	var p Params
	switch k.Field(&p).(type) {
	case *uint64:
		return "7"
	case *time.Duration:
		return "2s"
	case *int64:
		return "2MiB"
	case *float64:
		return "2.5"
	case *int:
		return "3"
	}
	if v, ok := map[string]string{"codec": Gzip, "sink": SinkNull}[k.Name]; ok {
		return v
	}
	return "/a b"
}

// Every parameter is declared whole: its reference row, a flag of its own,
// a field of a type every layer holds, and a value that a series key
// writes and reads back and a reader is shown.
func TestEveryParamKeyIsDeclaredWhole(t *testing.T) {
	flags := map[string]bool{}
	for _, k := range ParamKeys() {
		t.Run(k.Name, func(t *testing.T) {
			for what, v := range map[string]string{"Type": k.Type, "Default": k.Default, "Allowed": k.Allowed, "Doc": k.Doc, "Flag": k.Flag, "Usage": k.Usage} {
				assert.NotEmpty(t, v, what)
			}
			assert.False(t, flags[k.Flag], "flag --%s twice", k.Flag)
			flags[k.Flag] = true

			var p Params
			require.NotPanics(t, func() { require.NoError(t, k.ReadText("--"+k.Flag, sampleText(k), &p)) })
			require.True(t, k.IsSet(p))
			var back Params
			require.NoError(t, k.parse(&back, k.Text(p)))
			assert.Equal(t, p, back, "its series-key text reads back")
			var copied Params
			k.Copy(&copied, p)
			assert.Equal(t, p, copied)
		})
	}
}

// A parameter a series key holds only when set (InKey nil, as a new one's)
// tells two cells apart, and the text reads back, for every workload that
// takes it.
func TestOptionalParamsRoundTripInSeriesKeys(t *testing.T) {
	for _, w := range All() {
		for _, k := range ParamKeys() {
			if !k.TakenBy(w.Name) || k.InKey != nil {
				continue
			}
			p := paramsOf(w)[0]
			require.NoError(t, k.ReadText("", sampleText(k), &p))
			key := SeriesKey{Target: "host", Workload: w.Name, QoS: 9, Threads: 2, Params: p}
			got, rest, err := ParseSeriesKey(key.String() + " repeat=1")
			require.NoError(t, err, key.String())
			assert.Equal(t, key, got)
			assert.Equal(t, []string{"repeat=1"}, rest)
			assert.NotEqual(t, ParamsText(w.Name, paramsOf(w)[0]), ParamsText(w.Name, p), "%s tells cells apart", k.Name)
		}
	}
}

func TestParamsShown(t *testing.T) {
	assert.Equal(t, []string{"loops 2e8"}, ParamsShown(Params{Loops: 2e8}))
	assert.Equal(t, []string{"duration 1.5s"}, ParamsShown(Params{Duration: 1500 * time.Millisecond}))
	assert.Equal(t, []string{"size 16MiB", "ratio 3", "zstd level 3", "sink file", `sink_path "/a b"`},
		ParamsShown(Params{SizeBytes: 16 << 20, Ratio: 3, Codec: Zstd, Level: 3, Sink: SinkFile, SinkPath: "/a b"}))
	assert.Empty(t, ParamsShown(Params{}))
}
