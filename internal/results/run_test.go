package results

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/hv"
)

// testdataRuns are every run.json under testdata.
func testdataRuns(t *testing.T) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(filepath.Join("..", "..", "testdata"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == RunFile {
			out = append(out, path)
		}
		return err
	}))
	require.NotEmpty(t, out)
	return out
}

// Reading run.json and saving it again writes what was read: every part
// as it was recorded, not as this build's types would encode it again (an
// older spec lacks fields the spec has now; Info's 64-bit numbers are
// strings). So a resumed run's run.json keeps its bytes.
func TestRunJSONRoundTrip(t *testing.T) {
	for _, path := range testdataRuns(t) {
		t.Run(filepath.Base(filepath.Dir(path)), func(t *testing.T) {
			orig, err := os.ReadFile(path) //nolint:gosec // G304: the repository's testdata
			require.NoError(t, err)
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, RunFile), orig, 0o644))
			d, err := Open(dir)
			require.NoError(t, err)
			require.NoError(t, d.SaveRun())
			saved, err := os.ReadFile(filepath.Join(dir, RunFile)) //nolint:gosec // G304: the test's own file
			require.NoError(t, err)
			// What qoslab writes is indented JSON; what make.py or an
			// older qoslab wrote may lay it out otherwise, so the layout is
			// not compared, the JSON is, key by key in order.
			assert.Equal(t, indented(t, orig), string(saved))

			// The typed parts say what the JSON says.
			var raw struct {
				Spec    struct{ Name string }
				Targets map[string]struct {
					OS       string `json:"os"`
					CPUModel string `json:"cpu_model"`
				}
			}
			require.NoError(t, json.Unmarshal(orig, &raw))
			assert.Equal(t, raw.Spec.Name, d.Run.Spec.Value().Name)
			require.Len(t, d.Run.Targets, len(raw.Targets))
			for name, info := range raw.Targets {
				assert.Equal(t, info.OS, d.Run.Targets[name].Value().OS, name)
				assert.Equal(t, info.CPUModel, d.Run.Targets[name].Value().CPUModel, name)
			}
		})
	}
}

// indented is b as SaveRun lays JSON out.
func indented(t *testing.T, b []byte) string {
	t.Helper()
	var v json.RawMessage
	require.NoError(t, json.Unmarshal(b, &v))
	out, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	return string(out) + "\n"
}

// A run measured by a real agent records its Info's 64-bit numbers as
// strings (the protocol's JSON); they decode, and machines decode as the
// host's types.
func TestRunPartsDecode(t *testing.T) {
	d, err := Open(filepath.Join("..", "..", "testdata", "results", "compare-a"))
	require.NoError(t, err)
	host := d.Run.Targets["host"].Value()
	assert.NotZero(t, host.MemoryBytes)
	assert.NotEmpty(t, host.Hostname)
	assert.NotEmpty(t, d.Run.Spec.Value().Matrix)

	m, err := NewRecorded(map[string]hv.MachineInfo{"vm": {Backend: "qemu", Accel: "tcg", CPUs: 2}})
	require.NoError(t, err)
	assert.True(t, m.Present())
	assert.Equal(t, 2, m.Value()["vm"].CPUs)
	var none Machines
	assert.False(t, none.Present())
	assert.True(t, none.IsZero(), "omitted from run.json")
}

// A run.json whose spec, a target's Info or another typed part does not
// decode cannot be opened: the error names the file and the part, and
// the field in it.
func TestOpenNamesTheDamagedPart(t *testing.T) {
	head := `"schema_version": "1.0", "tool_version": "v1", "name": "x", "started": "2026-11-21T00:00:00Z", "finished": null`
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"spec", `{` + head + `, "spec": {"name": "x", "repeats": "six"}}`, []string{"its spec", "repeats"}},
		{"info", `{` + head + `, "targets": {"host": {"os": "linux"}, "vm": {"logical_cpus": "two"}}}`, []string{"its targets", "vm's Info", "logical_cpus"}},
		{"memory", `{` + head + `, "targets": {"host": {"memory_bytes": "8 GiB"}}}`, []string{"its targets", "host's Info", "memory_bytes"}},
		{"machines", `{` + head + `, "machines": {"vm": {"cpus": "2"}}}`, []string{"its machines", "cpus"}},
		{"contention", `{` + head + `, "contention": {"threads": "two"}}`, []string{"its contention", "threads"}},
		{"scheduling", `{` + head + `, "scheduling": []}`, []string{"its scheduling"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), c.name)
			writeRunJSON(t, dir, c.body)
			_, err := Open(dir)
			require.Error(t, err)
			assert.ErrorContains(t, err, filepath.Join(dir, RunFile))
			for _, w := range c.want {
				assert.ErrorContains(t, err, w)
			}
		})
	}
}

// rawRunRead is code that reads run.json's parts itself: decoding or
// indenting a Run's field, or reading the file.
var rawRunRead = regexp.MustCompile(`json\.(Unmarshal|Indent|Compact|NewDecoder)\([^)]*\b(Run|run|r|l|e|d)\.(Run\.)?(Spec|Targets|Machines|Contention|Scheduling)\b|ReadFile\([^)]*(\bRunFile\b|"run\.json")`)

// Only this package reads run.json: every other takes the typed Run that
// Open decoded once (a renamed field fails Open, not a report in silence).
func TestNoOtherPackageDecodesRunJSON(t *testing.T) {
	root := filepath.Join("..", "..")
	var found []string
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bin") || path == filepath.Join(root, "internal", "results") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path) //nolint:gosec // G304: the repository's own files
		if err != nil {
			return err
		}
		for _, m := range rawRunRead.FindAllString(string(b), -1) {
			found = append(found, path+": "+m)
		}
		return nil
	}))
	assert.Empty(t, found, "run.json is decoded in internal/results (Open) only; take the typed Run's values")
}

// The guard's pattern finds what it guards against.
func TestRawRunReadPattern(t *testing.T) {
	for _, s := range []string{
		"json.Unmarshal(r.Spec, &spec)",
		"_ = json.Unmarshal(e.Run.Spec, &spec)",
		"json.Unmarshal(l.Run.Targets[\"host\"], &info)",
		"json.Indent(&buf, r.Run.Spec, \"\", \"  \")",
		"json.Unmarshal(d.Run.Machines, &machines)",
		"os.ReadFile(filepath.Join(path, results.RunFile))",
		`os.ReadFile(filepath.Join(dir, "run.json"))`,
	} {
		assert.Regexp(t, rawRunRead, s)
	}
	assert.NotRegexp(t, rawRunRead, "os.Stat(filepath.Join(path, results.RunFile))")
}

// Info has every field of the agent's InfoReply, by the protocol's names
// (those run.json holds), nested messages too: a field added to the
// protocol is a field a reader can take, not one only the report's list
// of recorded fields shows.
func TestInfoHasEveryInfoReplyField(t *testing.T) {
	var check func(msg protoreflect.MessageDescriptor, typ reflect.Type)
	check = func(msg protoreflect.MessageDescriptor, typ reflect.Type) {
		tags := map[string]reflect.Type{}
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			tags[name] = typ.Field(i).Type
		}
		fields := msg.Fields()
		for i := range fields.Len() {
			f := fields.Get(i)
			ft, ok := tags[string(f.Name())]
			if !assert.True(t, ok, "%s.%s has no field in %s", msg.Name(), f.Name(), typ) {
				continue
			}
			if f.Message() != nil {
				if ft.Kind() == reflect.Slice {
					ft = ft.Elem()
				}
				check(f.Message(), ft)
			}
		}
	}
	check((&agentpb.InfoReply{}).ProtoReflect().Descriptor(), reflect.TypeFor[Info]())
}
