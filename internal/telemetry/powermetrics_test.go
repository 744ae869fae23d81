package telemetry

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const pmFixtures = "../../testdata/telemetry/powermetrics"

type wantPMCPU struct {
	id        int
	typ       string
	busy, mhz float64
}

type wantPMCluster struct {
	name, typ string
	busy, mhz float64
}

type wantPMSample struct {
	intervalNs  int64
	cpuW, pkgW  float64
	clusters    []wantPMCluster
	cpus        []wantPMCPU
	notesHaving []string // one substring per note, in order
}

func checkPMSample(t *testing.T, want wantPMSample, got Sample) {
	t.Helper()
	assert.Equal(t, SamplerPowermetrics, got.Sampler)
	assert.Equal(t, want.intervalNs, got.IntervalNs, "interval")
	require.NotNil(t, got.CPUW, "CPU power")
	assert.InDelta(t, want.cpuW, *got.CPUW, 1e-9, "CPU W")
	require.NotNil(t, got.PackageW, "package power")
	assert.InDelta(t, want.pkgW, *got.PackageW, 1e-9, "package W")

	require.Len(t, got.Clusters, len(want.clusters))
	for i, w := range want.clusters {
		c := got.Clusters[i]
		assert.Equal(t, w.name, c.Name)
		assert.Equal(t, w.typ, c.Type, "cluster %s type", w.name)
		require.NotNil(t, c.Busy, "cluster %s busy", w.name)
		assert.InDelta(t, w.busy, *c.Busy, 1e-9, "cluster %s busy", w.name)
		require.NotNil(t, c.MHz, "cluster %s MHz", w.name)
		assert.InDelta(t, w.mhz, *c.MHz, 1e-6, "cluster %s MHz", w.name)
		assert.Nil(t, c.Power, "powermetrics' plist has no per-cluster power")
	}
	require.Len(t, got.CPUs, len(want.cpus))
	for i, w := range want.cpus {
		c := got.CPUs[i]
		assert.Equal(t, w.id, c.ID)
		assert.Equal(t, w.typ, c.Type, "cpu %d type", w.id)
		require.NotNil(t, c.Busy, "cpu %d busy", w.id)
		assert.InDelta(t, w.busy, *c.Busy, 1e-9, "cpu %d busy", w.id)
		require.NotNil(t, c.MHz, "cpu %d MHz", w.id)
		assert.InDelta(t, w.mhz, *c.MHz, 1e-6, "cpu %d MHz", w.id)
	}
	require.Len(t, got.Notes, len(want.notesHaving), "notes: %q", got.Notes)
	for i, n := range want.notesHaving {
		assert.Contains(t, got.Notes[i], n)
	}
}

// The expected values of the constructed fixtures (see
// testdata/telemetry/README.md): watts are the plist's mW / 1000, busy is
// 1 - idle_ratio, MHz is freq_hz / 1e6. The fixtures print reals with six
// significant digits, as powermetrics does (idle 0.992188 -> busy 0.007812).
var (
	m1Samples = []wantPMSample{
		{ // idle
			intervalNs: 101843750, cpuW: 0.0490948, pkgW: 0.0589138,
			clusters: []wantPMCluster{{"E-Cluster", "E", 0.125, 1020}, {"P-Cluster", "P", 0.015625, 600}},
			cpus: []wantPMCPU{
				{0, "E", 0.25, 1020}, {1, "E", 0.125, 972}, {2, "E", 0.0625, 972}, {3, "E", 0.03125, 972},
				{4, "P", 0.015625, 828}, {5, "P", 0.007812, 600}, {6, "P", 0.003906, 600}, {7, "P", 0.003906, 600},
			},
		},
		{ // one QoS 9 thread spread over the E cores at 972 MHz
			intervalNs: 99876041, cpuW: 0.420521, pkgW: 0.430533,
			clusters: []wantPMCluster{{"E-Cluster", "E", 0.25, 972}, {"P-Cluster", "P", 0.007812, 600}},
			cpus: []wantPMCPU{
				{0, "E", 0.5, 972}, {1, "E", 0.25, 972}, {2, "E", 0.125, 972}, {3, "E", 0.125, 972},
				{4, "P", 0.007812, 600}, {5, "P", 0.003906, 600}, {6, "P", 0.007812, 600}, {7, "P", 0.003906, 600},
			},
		},
		{ // one QoS 33 thread on cpu 4 at 3204 MHz
			intervalNs: 100512333, cpuW: 1.51225, pkgW: 1.53215,
			clusters: []wantPMCluster{{"E-Cluster", "E", 0.09375, 1332}, {"P-Cluster", "P", 0.25, 3204}},
			cpus: []wantPMCPU{
				{0, "E", 0.125, 1332}, {1, "E", 0.09375, 1332}, {2, "E", 0.0625, 972}, {3, "E", 0.03125, 972},
				{4, "P", 1, 3204}, {5, "P", 0.015625, 3204}, {6, "P", 0.007812, 3204}, {7, "P", 0.003906, 3204},
			},
		},
	}
	m1MaxSamples = []wantPMSample{
		{ // three QoS 33 threads: P0 cpu 2, P1 cpu 6, one shared by the E cores at 2064 MHz
			intervalNs: 100250000, cpuW: 8.52868, pkgW: 8.55861,
			clusters: []wantPMCluster{{"E-Cluster", "E", 0.5625, 2064}, {"P0-Cluster", "P", 0.25, 2988}, {"P1-Cluster", "P", 0.25, 2988}},
			cpus: []wantPMCPU{
				{0, "E", 0.5625, 2064}, {1, "E", 0.5625, 2064},
				{2, "P", 1, 2988}, {3, "P", 0.007812, 2988}, {4, "P", 0.003906, 2988}, {5, "P", 0.003906, 2988},
				{6, "P", 1, 2988}, {7, "P", 0.003906, 2988}, {8, "P", 0.003906, 2988}, {9, "P", 0.003906, 2988},
			},
		},
		{ // the last thread on cpu 8; cpu 3 down for a quarter of the interval
			intervalNs: 99750000, cpuW: 4, pkgW: 4.02005,
			clusters: []wantPMCluster{{"E-Cluster", "E", 0.125, 972}, {"P0-Cluster", "P", 0.007812, 600}, {"P1-Cluster", "P", 0.25, 3228}},
			cpus: []wantPMCPU{
				{0, "E", 0.125, 972}, {1, "E", 0.125, 972},
				{2, "P", 0.007812, 600}, {3, "P", 0.25, 600}, {4, "P", 0.003906, 600}, {5, "P", 0.003906, 600},
				{6, "P", 0.007812, 3228}, {7, "P", 0.003906, 3228}, {8, "P", 1, 3228}, {9, "P", 0.003906, 3228},
			},
			notesHaving: []string{"down_ratio): 3 (0.25)"},
		},
	}
	m1Monterey = wantPMSample{ // energies only: 20 mJ CPU, 25 mJ package over 125 ms
		intervalNs: 125000000, cpuW: 0.16, pkgW: 0.2,
		clusters: []wantPMCluster{{"E-Cluster", "E", 0.25, 972}, {"P-Cluster", "P", 0.007812, 600}},
		cpus: []wantPMCPU{
			{0, "E", 0.5, 972}, {1, "E", 0.25, 972}, {2, "E", 0.125, 972}, {3, "E", 0.125, 972},
			{4, "P", 0.007812, 600}, {5, "P", 0.003906, 600}, {6, "P", 0.007812, 600}, {7, "P", 0.003906, 600},
		},
	}
)

func openPMFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(pmFixtures, name))
	require.NoError(t, err)
	return b
}

func TestPowermetricsFixtures(t *testing.T) {
	tests := []struct {
		file string
		want []wantPMSample
	}{
		{"m1.plists", m1Samples},
		{"m1max.plists", m1MaxSamples},
		{"m1-macos12.plists", []wantPMSample{m1Monterey}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			samples, notes, err := readPowermetricsStream(bytes.NewReader(openPMFixture(t, tt.file)))
			require.NoError(t, err)
			assert.Empty(t, notes)
			require.Len(t, samples, len(tt.want))
			for i, w := range tt.want {
				t.Run(fmt.Sprint("sample ", i+1), func(t *testing.T) { checkPMSample(t, w, samples[i]) })
			}
		})
	}
}

func TestPowermetricsTruncatedKeepsEarlierSamples(t *testing.T) {
	samples, notes, err := readPowermetricsStream(bytes.NewReader(openPMFixture(t, "truncated.plists")))
	require.NoError(t, err)
	require.Len(t, samples, 2)
	checkPMSample(t, m1Samples[0], samples[0])
	checkPMSample(t, m1Samples[1], samples[1])
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "document 3 is cut off at the end of the stream")
}

func TestPowermetricsGarbledIsSkippedAndStreamGoesOn(t *testing.T) {
	samples, notes, err := readPowermetricsStream(bytes.NewReader(openPMFixture(t, "garbled.plists")))
	require.NoError(t, err)
	require.Len(t, samples, 2)
	checkPMSample(t, m1Samples[0], samples[0])
	checkPMSample(t, m1Samples[2], samples[1])
	require.Len(t, notes, 2, "notes: %q", notes)
	assert.Contains(t, notes[0], "document 2 skipped")
	assert.Contains(t, notes[1], "document 3 skipped")
}

// pmSeparators are the ways a stream can place its NULs: powermetrics
// writes one at the start of the line after each </plist> except the last;
// a reader must not depend on which.
func TestPowermetricsReaderSeparators(t *testing.T) {
	docs := bytes.Split(openPMFixture(t, "m1.plists"), []byte{0})
	require.Len(t, docs, 3)
	tests := map[string][]byte{
		"NUL between":        bytes.Join(docs, []byte{0}),
		"NUL after each":     append(bytes.Join(docs, []byte{0}), 0),
		"NUL before each":    append([]byte{0}, bytes.Join(docs, []byte{0})...),
		"no NUL at all":      bytes.Join(docs, nil),
		"runs of NULs":       bytes.Join(docs, []byte("\x00\x00\n\x00")),
		"CRLF and blank":     bytes.ReplaceAll(bytes.Join(docs, []byte("\n\x00\n\n")), []byte("\n"), []byte("\r\n")),
		"NUL mid-line":       bytes.Join(docs, []byte("  \x00  ")),
		"whitespace at ends": append(append([]byte("\n\n"), bytes.Join(docs, []byte{0})...), "\n\n"...),
	}
	for name, stream := range tests {
		t.Run(name, func(t *testing.T) {
			for _, r := range map[string]io.Reader{
				"whole":       bytes.NewReader(stream),
				"byte a time": iotest.OneByteReader(bytes.NewReader(stream)),
			} {
				samples, notes, err := readPowermetricsStream(r)
				require.NoError(t, err)
				assert.Empty(t, notes)
				require.Len(t, samples, 3)
				for i := range samples {
					checkPMSample(t, m1Samples[i], samples[i])
				}
			}
		})
	}
}

// A sample is handed out at its </plist> line, not an interval later when
// the next document's separator arrives.
func TestPowermetricsReaderDoesNotWaitForSeparator(t *testing.T) {
	doc := bytes.Split(openPMFixture(t, "m1.plists"), []byte{0})[0]
	pr, pw := io.Pipe()
	defer pr.Close()
	go func() { _, _ = pw.Write(doc) }() // and nothing more: the pipe stays open

	type result struct {
		s   Sample
		err error
	}
	got := make(chan result, 1)
	go func() {
		s, err := newPowermetricsReader(pr, nil).Next()
		got <- result{s, err}
	}()
	select {
	case r := <-got:
		require.NoError(t, r.err)
		checkPMSample(t, m1Samples[0], r.s)
	case <-time.After(5 * time.Second):
		t.Fatal("Next waited for a separator after </plist>")
	}
}

// A document cut off mid-stream (no </plist>, no NUL) must not swallow the
// next one: a new <?xml line ends it.
func TestPowermetricsReaderCutMidStream(t *testing.T) {
	docs := bytes.Split(openPMFixture(t, "m1.plists"), []byte{0})
	cut := docs[1][:len(docs[1])/2]
	stream := bytes.Join([][]byte{docs[0], cut, docs[2]}, nil)
	samples, notes, err := readPowermetricsStream(bytes.NewReader(stream))
	require.NoError(t, err)
	require.Len(t, samples, 2)
	checkPMSample(t, m1Samples[0], samples[0])
	checkPMSample(t, m1Samples[2], samples[1])
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "document 2 skipped")
}

func TestPowermetricsReaderOversizeDocument(t *testing.T) {
	docs := bytes.Split(openPMFixture(t, "m1.plists"), []byte{0})
	huge := bytes.Repeat([]byte("<!-- runaway -->\n"), 4000)
	stream := bytes.Join([][]byte{docs[0], huge, docs[1]}, []byte{0})

	r := newPowermetricsReader(bytes.NewReader(stream), nil)
	r.max = len(docs[0]) + 1024 // between a real document and the runaway
	s, err := r.Next()
	require.NoError(t, err)
	checkPMSample(t, m1Samples[0], s)
	_, err = r.Next()
	var skipped *skippedDocumentError
	require.ErrorAs(t, err, &skipped)
	assert.Equal(t, 2, skipped.Doc)
	assert.False(t, skipped.Truncated)
	assert.Contains(t, err.Error(), "larger than")
	s, err = r.Next()
	require.NoError(t, err)
	checkPMSample(t, m1Samples[1], s)
	_, err = r.Next()
	assert.ErrorIs(t, err, io.EOF)
}

func TestPowermetricsReaderReadError(t *testing.T) {
	doc := bytes.Split(openPMFixture(t, "m1.plists"), []byte{0})[0]
	boom := errors.New("pipe closed")
	r := newPowermetricsReader(io.MultiReader(bytes.NewReader(doc), bytes.NewReader(doc[:100]), iotest.ErrReader(boom)), nil)
	s, err := r.Next()
	require.NoError(t, err)
	checkPMSample(t, m1Samples[0], s)
	_, err = r.Next()
	var skipped *skippedDocumentError
	require.ErrorAs(t, err, &skipped, "the partial document first")
	assert.True(t, skipped.Truncated)
	_, err = r.Next()
	require.ErrorIs(t, err, boom)
	assert.False(t, errors.Is(err, io.EOF))
}

// pmDoc builds a small powermetrics document; processor is the body of the
// processor dictionary, top the other top-level keys.
func pmDoc(top, processor string) []byte {
	return []byte(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
` + top + `
<key>processor</key>
<dict>
` + processor + `
</dict>
</dict>
</plist>
`)
}

const (
	pmTestElapsed = `<key>elapsed_ns</key><integer>100000000</integer>`
	pmTestPower   = `<key>cpu_power</key><real>1500</real><key>combined_power</key><real>1600</real>`
)

func pmCluster(name, cpus string) string {
	n := ""
	if name != "" {
		n = `<key>name</key><string>` + name + `</string>`
	}
	return `<dict>` + n + `<key>freq_hz</key><real>2e+09</real><key>idle_ratio</key><real>0.5</real><key>cpus</key><array>` + cpus + `</array></dict>`
}

func pmCPU(id int, extra string) string {
	return fmt.Sprintf(`<dict><key>cpu</key><integer>%d</integer><key>freq_hz</key><real>2.5e+09</real><key>idle_ratio</key><real>0.25</real>%s</dict>`, id, extra)
}

func pmClusters(cs ...string) string {
	return `<key>clusters</key><array>` + strings.Join(cs, "") + `</array>`
}

func TestParsePowermetricsPlistMissingKeys(t *testing.T) {
	m1Levels := []perfLevel{{Level: 0, Name: "Performance", LogicalCPUs: 4}, {Level: 1, Name: "Efficiency", LogicalCPUs: 4}}
	tests := []struct {
		name   string
		doc    []byte
		levels []perfLevel
		check  func(t *testing.T, s Sample)
		notes  []string
	}{
		{
			name: "no elapsed_ns",
			doc:  pmDoc("", pmTestPower+pmClusters(pmCluster("E-Cluster", pmCPU(0, "")))),
			check: func(t *testing.T, s Sample) {
				assert.Zero(t, s.IntervalNs)
				require.NotNil(t, s.CPUW)
				assert.InDelta(t, 1.5, *s.CPUW, 1e-12)
				require.Len(t, s.CPUs, 1)
			},
			notes: []string{"no elapsed_ns"},
		},
		{
			name: "no elapsed_ns nor power: energy cannot be turned into power",
			doc:  pmDoc("", `<key>cpu_energy</key><integer>150</integer>`+pmClusters(pmCluster("E-Cluster", pmCPU(0, "")))),
			check: func(t *testing.T, s Sample) {
				assert.Nil(t, s.CPUW)
				assert.Nil(t, s.PackageW)
			},
			notes: []string{"no elapsed_ns", "CPU power unknown", "package power unknown"},
		},
		{
			name: "energy only, as integers or reals",
			doc:  pmDoc(pmTestElapsed, `<key>cpu_energy</key><real>150.5</real><key>package_energy</key><integer>200</integer>`+pmClusters(pmCluster("P-Cluster", pmCPU(4, "")))),
			check: func(t *testing.T, s Sample) {
				require.NotNil(t, s.CPUW)
				assert.InDelta(t, 1.505, *s.CPUW, 1e-12)
				require.NotNil(t, s.PackageW)
				assert.InDelta(t, 2.0, *s.PackageW, 1e-12)
			},
		},
		{
			name: "power as an integer",
			doc:  pmDoc(pmTestElapsed, `<key>cpu_power</key><integer>750</integer><key>combined_power</key><integer>800</integer>`+pmClusters(pmCluster("P-Cluster", pmCPU(4, "")))),
			check: func(t *testing.T, s Sample) {
				require.NotNil(t, s.CPUW)
				assert.InDelta(t, 0.75, *s.CPUW, 1e-12)
			},
		},
		{
			name: "no processor dictionary",
			doc:  []byte(`<?xml version="1.0"?><plist version="1.0"><dict>` + pmTestElapsed + `</dict></plist>`),
			check: func(t *testing.T, s Sample) {
				assert.Equal(t, int64(100000000), s.IntervalNs)
				assert.Empty(t, s.CPUs)
				assert.Nil(t, s.CPUW)
			},
			notes: []string{"no processor dictionary"},
		},
		{
			name: "no clusters",
			doc:  pmDoc(pmTestElapsed, pmTestPower),
			check: func(t *testing.T, s Sample) {
				assert.Empty(t, s.CPUs)
				require.NotNil(t, s.PackageW)
				assert.InDelta(t, 1.6, *s.PackageW, 1e-12)
			},
			notes: []string{"no processor.clusters"},
		},
		{
			// A runner that is a VM may list no clusters at all.
			name: "empty clusters",
			doc:  pmDoc(pmTestElapsed, pmTestPower+`<key>clusters</key><array></array>`),
			check: func(t *testing.T, s Sample) {
				assert.Empty(t, s.Clusters)
				assert.Empty(t, s.CPUs)
			},
			notes: []string{"processor.clusters is empty"},
		},
		{
			name: "clusters of the wrong type",
			doc:  pmDoc(pmTestElapsed, pmTestPower+`<key>clusters</key><string>oops</string>`),
			check: func(t *testing.T, s Sample) {
				assert.Empty(t, s.Clusters)
			},
			notes: []string{"no processor.clusters"},
		},
		{
			name:   "unnamed cluster typed from sysctl",
			doc:    pmDoc(pmTestElapsed, pmTestPower+pmClusters(pmCluster("", pmCPU(1, "")), pmCluster("", pmCPU(6, "")))),
			levels: m1Levels,
			check: func(t *testing.T, s Sample) {
				require.Len(t, s.CPUs, 2)
				assert.Equal(t, "E", s.CPUs[0].Type)
				assert.Equal(t, "P", s.CPUs[1].Type)
				require.Len(t, s.Clusters, 2)
				assert.Equal(t, "cluster 0", s.Clusters[0].Name)
				assert.Empty(t, s.Clusters[0].Type)
			},
			notes: []string{"cluster 0 has no name", "cluster 1 has no name", "cpus 1,6 from sysctl perf levels"},
		},
		{
			name: "unknown cluster name, no perf levels",
			doc:  pmDoc(pmTestElapsed, pmTestPower+pmClusters(pmCluster("CPU Complex", pmCPU(0, "")))),
			check: func(t *testing.T, s Sample) {
				require.Len(t, s.CPUs, 1)
				assert.Empty(t, s.CPUs[0].Type)
				assert.Equal(t, "CPU Complex", s.Clusters[0].Name)
			},
			notes: []string{"core types of cpus 0 unknown"},
		},
		{
			name: "M5 cluster names",
			doc:  pmDoc(pmTestElapsed, pmTestPower+pmClusters(pmCluster("M0-Cluster", pmCPU(0, "")), pmCluster("P10-Cluster", pmCPU(12, "")))),
			check: func(t *testing.T, s Sample) {
				require.Len(t, s.CPUs, 2)
				assert.Equal(t, "M", s.CPUs[0].Type)
				assert.Equal(t, "P", s.CPUs[1].Type)
			},
		},
		{
			name: "cpu without idle_ratio, freq 0, or number",
			doc: pmDoc(pmTestElapsed, pmTestPower+pmClusters(pmCluster("E-Cluster",
				`<dict><key>cpu</key><integer>0</integer><key>freq_hz</key><real>1e+09</real></dict>`+
					`<dict><key>cpu</key><integer>1</integer><key>freq_hz</key><real>0</real><key>idle_ratio</key><real>1</real></dict>`+
					`<dict><key>freq_hz</key><real>1e+09</real><key>idle_ratio</key><real>0.5</real></dict>`+
					`<string>not a cpu</string>`))),
			check: func(t *testing.T, s Sample) {
				require.Len(t, s.CPUs, 2)
				assert.Nil(t, s.CPUs[0].Busy)
				require.NotNil(t, s.CPUs[0].MHz)
				assert.InDelta(t, 1000.0, *s.CPUs[0].MHz, 1e-9)
				require.NotNil(t, s.CPUs[1].Busy)
				assert.Zero(t, *s.CPUs[1].Busy)
				assert.Nil(t, s.CPUs[1].MHz, "a core that never ran has no frequency, not 0 MHz")
			},
			notes: []string{"cpu 0: no idle_ratio", "cpu entry 2 has no cpu number", "cpu entry 3 is not a dictionary"},
		},
		{
			name: "cluster without frequency and residency",
			doc:  pmDoc(pmTestElapsed, pmTestPower+pmClusters(`<dict><key>name</key><string>E-Cluster</string><key>cpus</key><array>`+pmCPU(0, "")+`</array></dict>`)),
			check: func(t *testing.T, s Sample) {
				require.Len(t, s.Clusters, 1)
				assert.Nil(t, s.Clusters[0].MHz)
				assert.Nil(t, s.Clusters[0].Busy)
				require.Len(t, s.CPUs, 1)
				assert.Equal(t, "E", s.CPUs[0].Type)
			},
			notes: []string{"E-Cluster: no freq_hz", "E-Cluster: no idle_ratio"},
		},
		{
			name: "idle ratio out of range is clamped",
			doc: pmDoc(pmTestElapsed, pmTestPower+pmClusters(pmCluster("E-Cluster",
				`<dict><key>cpu</key><integer>0</integer><key>idle_ratio</key><real>1.0000001</real></dict>`+
					`<dict><key>cpu</key><integer>1</integer><key>idle_ratio</key><integer>-1</integer></dict>`))),
			check: func(t *testing.T, s Sample) {
				require.Len(t, s.CPUs, 2)
				assert.Zero(t, *s.CPUs[0].Busy)
				assert.Equal(t, 1.0, *s.CPUs[1].Busy)
			},
		},
		{
			name: "cpus sorted by id",
			doc:  pmDoc(pmTestElapsed, pmTestPower+pmClusters(pmCluster("P0-Cluster", pmCPU(5, "")+pmCPU(4, "")), pmCluster("E-Cluster", pmCPU(0, "")))),
			check: func(t *testing.T, s Sample) {
				require.Len(t, s.CPUs, 3)
				assert.Equal(t, []int{0, 4, 5}, []int{s.CPUs[0].ID, s.CPUs[1].ID, s.CPUs[2].ID})
				assert.Equal(t, []string{"E", "P", "P"}, []string{s.CPUs[0].Type, s.CPUs[1].Type, s.CPUs[2].Type})
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parsePowermetricsPlist(tt.doc, tt.levels)
			require.NoError(t, err)
			assert.Equal(t, SamplerPowermetrics, s.Sampler)
			tt.check(t, s)
			require.Len(t, s.Notes, len(tt.notes), "notes: %q", s.Notes)
			for i, n := range tt.notes {
				assert.Contains(t, s.Notes[i], n)
			}
		})
	}
}

func TestParsePowermetricsPlistRejectsNonDictionaries(t *testing.T) {
	for name, doc := range map[string]string{
		"empty":          "",
		"text":           "powermetrics: must be invoked as the superuser",
		"array root":     `<?xml version="1.0"?><plist version="1.0"><array><integer>1</integer></array></plist>`,
		"unclosed dict":  `<?xml version="1.0"?><plist version="1.0"><dict><key>elapsed_ns</key><integer>1</integer>`,
		"bad number":     `<?xml version="1.0"?><plist version="1.0"><dict><key>elapsed_ns</key><integer>1x</integer></dict></plist>`,
		"binary garbage": "\xff\xfe\x00\x01bplist00\x00",
		"text plist":     "{ elapsed_ns = 1; }",
		"bplist header":  "bplist00\x00\x00\x00\x00\x00\x00\x00\x00",
		// Nested deep enough to overflow the parser's stack: a fatal
		// error, not a panic, so it must be refused before parsing.
		"nested 3M deep": `<?xml version="1.0"?><plist version="1.0">` + strings.Repeat("<array>", 3_000_000),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parsePowermetricsPlist([]byte(doc), nil)
			assert.Error(t, err)
		})
	}
}

func TestPowermetricsCommand(t *testing.T) {
	args := []string{"--samplers", "cpu_power", "-i", "100", "-f", "plist"}
	tests := []struct {
		name     string
		interval time.Duration
		root     bool
		sudoOK   bool
		want     []string
	}{
		{"root", 100 * time.Millisecond, true, false, append([]string{"/usr/bin/powermetrics"}, args...)},
		{"root ignores sudo", 100 * time.Millisecond, true, true, append([]string{"/usr/bin/powermetrics"}, args...)},
		{"sudoers entry", 100 * time.Millisecond, false, true, append([]string{"sudo", "-n", "/usr/bin/powermetrics"}, args...)},
		{"default interval", 0, true, false, append([]string{"/usr/bin/powermetrics"}, args...)},
		{"one second", time.Second, true, false, []string{"/usr/bin/powermetrics", "--samplers", "cpu_power", "-i", "1000", "-f", "plist"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv, err := powermetricsCommand(tt.interval, tt.root, tt.sudoOK, 501, "alice")
			require.NoError(t, err)
			assert.Equal(t, tt.want, argv)
		})
	}
}

func TestPowermetricsUnavailableErrorNamesTheFix(t *testing.T) {
	argv, err := powermetricsCommand(100*time.Millisecond, false, false, 501, "alice")
	require.Error(t, err)
	assert.Nil(t, argv)

	wrapped := fmt.Errorf("host telemetry: %w", err)
	var ue *UnavailableError
	require.ErrorAs(t, wrapped, &ue)
	assert.Equal(t, SamplerPowermetrics, ue.Sampler)
	assert.Contains(t, ue.Reason, "uid 501")
	msg := wrapped.Error()
	assert.Contains(t, msg, "powermetrics telemetry unavailable")
	assert.Contains(t, msg, "run qoslab with sudo")
	assert.Contains(t, msg, "sudo visudo -f /etc/sudoers.d/qoslab-powermetrics")
	assert.Contains(t, msg, "alice ALL=(root) NOPASSWD: /usr/bin/powermetrics\n", "the exact sudoers line, on a line of its own")

	_, err = powermetricsCommand(0, false, false, 501, "")
	assert.Contains(t, err.Error(), "YOUR_USER_NAME ALL=(root) NOPASSWD: /usr/bin/powermetrics")
}

func TestUnavailableErrorWithoutFix(t *testing.T) {
	err := &UnavailableError{Sampler: "x", Reason: "no"}
	assert.Equal(t, "x telemetry unavailable: no", err.Error())
	assert.Contains(t, powermetricsMissing(os.ErrNotExist).Error(), "/usr/bin/powermetrics: file does not exist")
}

func TestPowermetricsStreamTake(t *testing.T) {
	docs := bytes.Split(openPMFixture(t, "m1.plists"), []byte{0})
	s := newPowermetricsStream(nil, "powermetrics: no perf levels: test")

	// Nothing yet: the sample says so, and carries the start-up note.
	got := s.take()
	assert.Equal(t, SamplerPowermetrics, got.Sampler)
	assert.Empty(t, got.CPUs)
	assert.Equal(t, []string{"powermetrics: no perf levels: test", "no powermetrics sample arrived since the previous sample"}, got.Notes)

	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.consume(pr)
		s.end("powermetrics exited: test")
	}()
	_, err := pw.Write(append(docs[0], 0))
	require.NoError(t, err)
	select {
	case <-s.started():
	case <-time.After(5 * time.Second):
		t.Fatal("no first sample")
	}
	require.True(t, s.hasSamples())
	checkPMSample(t, m1Samples[0], s.take())

	// Two samples and a garbled document between calls: one sample
	// covering both intervals, and a note for the garbled one.
	_, err = pw.Write([]byte("garbage\x00"))
	require.NoError(t, err)
	_, err = pw.Write(append(docs[1], 0))
	require.NoError(t, err)
	_, err = pw.Write(docs[2])
	require.NoError(t, err)
	require.NoError(t, pw.Close())
	<-done

	merged := s.take()
	assert.Equal(t, m1Samples[1].intervalNs+m1Samples[2].intervalNs, merged.IntervalNs)
	w1, w2 := float64(m1Samples[1].intervalNs), float64(m1Samples[2].intervalNs)
	require.Len(t, merged.CPUs, 8)
	// cpu 4: busy 0.007812 at 600 MHz, then 1 at 3204 MHz.
	cpu4 := merged.CPUs[4]
	assert.Equal(t, "P", cpu4.Type)
	assert.InDelta(t, (0.007812*w1+1*w2)/(w1+w2), *cpu4.Busy, 1e-12, "busy: time-weighted")
	assert.InDelta(t, (600*0.007812*w1+3204*1*w2)/(0.007812*w1+1*w2), *cpu4.MHz, 1e-9, "MHz: active-time-weighted")
	assert.InDelta(t, (0.420521*w1+1.51225*w2)/(w1+w2), *merged.CPUW, 1e-12, "power: time-weighted")
	require.Len(t, merged.Clusters, 2)
	assert.Equal(t, "P-Cluster", merged.Clusters[1].Name)
	assert.InDelta(t, (0.007812*w1+0.25*w2)/(w1+w2), *merged.Clusters[1].Busy, 1e-12)
	require.Len(t, merged.Notes, 2, "notes: %q", merged.Notes)
	assert.Contains(t, merged.Notes[0], "document 2 skipped")
	assert.Equal(t, "powermetrics exited: test", merged.Notes[1])

	got = s.take()
	assert.Empty(t, got.CPUs)
	assert.Equal(t, []string{"powermetrics is not running; no telemetry since the previous sample"}, got.Notes)
}

func TestPowermetricsStreamBoundsPending(t *testing.T) {
	doc := bytes.Split(openPMFixture(t, "m1.plists"), []byte{0})[0]
	n := 3*maxPendingSamples + 5
	s := newPowermetricsStream(nil)
	s.consume(bytes.NewReader(bytes.Repeat(append(bytes.Clone(doc), 0), n)))
	s.mu.Lock()
	pending := len(s.pending)
	s.mu.Unlock()
	assert.LessOrEqual(t, pending, maxPendingSamples)

	got := s.take()
	assert.Equal(t, int64(n)*m1Samples[0].intervalNs, got.IntervalNs, "merged, not dropped")
	require.Len(t, got.CPUs, 8)
	assert.InDelta(t, 0.25, *got.CPUs[0].Busy, 1e-9)
	assert.InDelta(t, 1020, *got.CPUs[0].MHz, 1e-6)
	assert.Empty(t, got.Notes)
}

func TestMergePowermetricsSamples(t *testing.T) {
	t.Run("one sample is returned as is", func(t *testing.T) {
		in := Sample{Sampler: SamplerPowermetrics, IntervalNs: 3, CPUs: []CPU{{ID: 0, Busy: Float(0.1)}}}
		assert.Equal(t, in, mergePowermetricsSamples([]Sample{in}))
	})
	t.Run("missing values and intervals", func(t *testing.T) {
		a := Sample{IntervalNs: 100, CPUW: Float(1), CPUs: []CPU{{ID: 1, Type: "E", Busy: Float(0), MHz: Float(600)}}, Notes: []string{"n"}}
		b := Sample{IntervalNs: 300, CPUs: []CPU{{ID: 1, Busy: Float(0), MHz: Float(1000)}, {ID: 0, Type: "E"}}, Notes: []string{"n"}}
		c := Sample{CPUW: Float(3), Notes: []string{"m"}} // no interval: weighs as the mean (200)
		got := mergePowermetricsSamples([]Sample{a, b, c})
		assert.Equal(t, int64(400), got.IntervalNs)
		require.NotNil(t, got.CPUW)
		assert.InDelta(t, (1*100+3*200)/300.0, *got.CPUW, 1e-12)
		assert.Nil(t, got.PackageW)
		require.Len(t, got.CPUs, 2)
		assert.Equal(t, 0, got.CPUs[0].ID)
		assert.Nil(t, got.CPUs[0].Busy)
		assert.Equal(t, "E", got.CPUs[1].Type)
		require.NotNil(t, got.CPUs[1].MHz, "never active: frequency averaged over time")
		assert.InDelta(t, (600*100+1000*300)/400.0, *got.CPUs[1].MHz, 1e-9)
		assert.Equal(t, []string{"n", "m", "powermetrics: CPU power from 2 of 3 samples merged"}, got.Notes)
	})
}

func TestTailBuffer(t *testing.T) {
	tb := &tailBuffer{max: 8}
	_, _ = tb.Write([]byte("powermetrics: "))
	_, _ = tb.Write([]byte("no such sampler\n"))
	assert.Equal(t, "sampler", tb.String())
	assert.Equal(t, "powermetrics exited: exit status 1 (stderr: sampler)", powermetricsExitNote(errors.New("exit status 1"), tb.String()))
	assert.Equal(t, "powermetrics exited", powermetricsExitNote(nil, ""))
}

// FuzzPowermetricsReader: whatever powermetrics (or a broken pipe) writes,
// reading ends, and never panics.
func FuzzPowermetricsReader(f *testing.F) {
	for _, name := range []string{"m1.plists", "truncated.plists", "garbled.plists"} {
		b, err := os.ReadFile(filepath.Join(pmFixtures, name))
		require.NoError(f, err)
		f.Add(b[:min(len(b), 4000)])
	}
	f.Add(pmDoc(pmTestElapsed, pmTestPower+pmClusters(pmCluster("E-Cluster", pmCPU(0, "")))))
	f.Add([]byte("\x00\x00<?xml\n\x00</plist>\n"))
	f.Add([]byte("bplist00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := newPowermetricsReader(bytes.NewReader(data), []perfLevel{{Name: "Efficiency", LogicalCPUs: 2}})
		for i := 0; ; i++ {
			require.Less(t, i, len(data)+2, "more documents than bytes")
			_, err := r.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			var skipped *skippedDocumentError
			if err != nil && !errors.As(err, &skipped) {
				t.Fatalf("unexpected error: %v", err)
			}
		}
	})
}

// readPowermetricsStream reads a whole recorded powermetrics stream, with
// no perf levels. Skipped
// documents become notes; err is a read error other than the end of the
// stream, with the samples read before it.
func readPowermetricsStream(r io.Reader) (samples []Sample, notes []string, err error) {
	pr := newPowermetricsReader(r, nil)
	for {
		s, err := pr.Next()
		var skipped *skippedDocumentError
		switch {
		case err == nil:
			samples = append(samples, s)
		case errors.Is(err, io.EOF):
			return samples, notes, nil
		case errors.As(err, &skipped):
			notes = append(notes, skipped.Error())
		default:
			return samples, notes, err
		}
	}
}
