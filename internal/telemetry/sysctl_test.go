package telemetry

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSysctlPerfLevelsFixtures(t *testing.T) {
	tests := []struct {
		file  string
		want  []perfLevel
		types map[int]string
	}{
		{
			file: "m1-hw.txt",
			want: []perfLevel{
				{Level: 0, Name: "Performance", LogicalCPUs: 4, PhysicalCPUs: 4, CPUsPerL2: 4},
				{Level: 1, Name: "Efficiency", LogicalCPUs: 4, PhysicalCPUs: 4, CPUsPerL2: 4},
			},
			types: map[int]string{0: "E", 1: "E", 2: "E", 3: "E", 4: "P", 5: "P", 6: "P", 7: "P"},
		},
		{
			file: "m1max-hw.txt",
			want: []perfLevel{
				{Level: 0, Name: "Performance", LogicalCPUs: 8, PhysicalCPUs: 8, CPUsPerL2: 4},
				{Level: 1, Name: "Efficiency", LogicalCPUs: 2, PhysicalCPUs: 2, CPUsPerL2: 2},
			},
			types: map[int]string{0: "E", 1: "E", 2: "P", 3: "P", 4: "P", 5: "P", 6: "P", 7: "P", 8: "P", 9: "P"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("../../testdata/telemetry/sysctl", tt.file))
			require.NoError(t, err)
			levels, err := parseSysctlPerfLevels(b)
			require.NoError(t, err)
			assert.Equal(t, tt.want, levels)
			assert.Equal(t, tt.types, perfLevelCPUTypes(levels))
		})
	}
}

func TestParseSysctlPerfLevels(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		want    []perfLevel
		wantErr string
	}{
		{
			name: "M5 Pro names, quoted, = separator, any order",
			out: "hw.perflevel1.name = \"Performance\"\nhw.perflevel1.logicalcpu = 12\n" +
				"hw.perflevel0.logicalcpu: 6\nhw.perflevel0.name: Super\nhw.nperflevels: 2\n",
			want: []perfLevel{{Level: 0, Name: "Super", LogicalCPUs: 6}, {Level: 1, Name: "Performance", LogicalCPUs: 12}},
		},
		{
			name: "one level, no nperflevels, unrelated keys",
			out:  "kern.ostype: Darwin\nhw.perflevel0.name: Performance\nhw.perflevel0.logicalcpu: 4\nhw.perflevelX.name: junk\ngarbage line\n",
			want: []perfLevel{{Level: 0, Name: "Performance", LogicalCPUs: 4}},
		},
		{name: "no perf levels (Intel)", out: "hw.ncpu: 8\nhw.physicalcpu: 4\n", wantErr: "no hw.perflevel keys"},
		{name: "empty", out: "", wantErr: "no hw.perflevel keys"},
		{
			name:    "count disagrees",
			out:     "hw.nperflevels: 3\nhw.perflevel0.name: Performance\nhw.perflevel0.logicalcpu: 4\n",
			wantErr: "hw.nperflevels is 3 but 1 levels are listed",
		},
		{
			name:    "a level missing",
			out:     "hw.perflevel0.name: Performance\nhw.perflevel0.logicalcpu: 4\nhw.perflevel2.name: Efficiency\nhw.perflevel2.logicalcpu: 4\n",
			wantErr: "hw.perflevel1 is missing",
		},
		{name: "no name", out: "hw.perflevel0.logicalcpu: 4\n", wantErr: "hw.perflevel0.name is missing"},
		{name: "no cpus", out: "hw.perflevel0.name: Performance\n", wantErr: "hw.perflevel0.logicalcpu is missing"},
		{name: "bad count", out: "hw.perflevel0.name: P\nhw.perflevel0.logicalcpu: four\n", wantErr: "line 2: hw.perflevel0.logicalcpu \"four\" is not a count"},
		{name: "bad nperflevels", out: "hw.nperflevels: -1\n", wantErr: "hw.nperflevels \"-1\" is not a count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			levels, err := parseSysctlPerfLevels([]byte(tt.out))
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.Nil(t, levels)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, levels)
		})
	}
}

func TestPerfLevelType(t *testing.T) {
	for name, want := range map[string]string{
		"Performance": "P",
		"Efficiency":  "E",
		"Super":       "S",
		"medium":      "M",
		"":            "",
	} {
		assert.Equal(t, want, perfLevel{Name: name}.Type(), name)
	}
}

func TestPerfLevelCPUTypesThreeLevels(t *testing.T) {
	levels := []perfLevel{{Name: "Super", LogicalCPUs: 1}, {Name: "Performance", LogicalCPUs: 2}, {Name: "Efficiency", LogicalCPUs: 1}}
	assert.Equal(t, map[int]string{0: "E", 1: "P", 2: "P", 3: "S"}, perfLevelCPUTypes(levels))
	assert.Empty(t, perfLevelCPUTypes(nil))
}
