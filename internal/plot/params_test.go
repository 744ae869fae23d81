package plot

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/qoslab/qoslab/internal/analysis"
)

// Two sizes of one compression workload are two bar clusters, the smaller
// first, not one cluster drawing whichever cell came first.
func TestBarGroupsKeepEachSetOfParameters(t *testing.T) {
	const small, large = "size=4194304 ratio=3 codec=zstd level=0 sink=null", "size=33554432 ratio=3 codec=zstd level=0 sink=null"
	var cells []analysis.Cell
	for _, p := range []string{large, small} {
		for _, target := range []string{"host", "vm"} {
			cells = append(cells, analysis.Cell{CellKey: analysis.CellKey{Target: target, Workload: "compress", Phase: "compress", QoS: 33, Threads: 1, Params: p}})
		}
	}
	assert.Equal(t, []barGroup{
		{workload: "compress", phase: "compress", params: small, qos: 33, threads: 1},
		{workload: "compress", phase: "compress", params: large, qos: 33, threads: 1},
	}, barGroups(cells))
}
