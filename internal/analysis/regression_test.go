package analysis

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFitLine(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name string
		x, y []float64
		want Regression
	}{
		{"exact line", []float64{1, 2, 3, 4}, []float64{5, 8, 11, 14}, Regression{A: 2, B: 3, R2: 1, N: 4}},
		{"falling line", []float64{0, 5, 10}, []float64{10, 0, -10}, Regression{A: 10, B: -2, R2: 1, N: 3}},
		// By hand: means (2, 2), Sxx = 2, Sxy = 1, so B = 0.5, A = 1;
		// residuals -0.5, 1, -0.5 give SSres = 1.5 of SStot = 2: R² = 0.25.
		{"scatter", []float64{1, 2, 3}, []float64{1, 3, 2}, Regression{A: 1, B: 0.5, R2: 0.25, N: 3}},
		// Repeats share an x: two points per thread count.
		{"repeats", []float64{1, 1, 2, 2}, []float64{9, 11, 19, 21}, Regression{A: 0, B: 10, R2: 100.0 / 104, N: 4}},
		{"flat", []float64{1, 2, 3}, []float64{7, 7, 7}, Regression{A: 7, B: 0, R2: 1, N: 3}},
		{"nan pair skipped", []float64{1, nan, 2, 3}, []float64{5, 6, 8, 11}, Regression{A: 2, B: 3, R2: 1, N: 3}},
		{"one x", []float64{2, 2, 2}, []float64{1, 2, 3}, Regression{A: Float(nan), B: Float(nan), R2: Float(nan), N: 3}},
		{"one point", []float64{1}, []float64{1}, Regression{A: Float(nan), B: Float(nan), R2: Float(nan), N: 1}},
		{"none", nil, nil, Regression{A: Float(nan), B: Float(nan), R2: Float(nan)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := fitLine(c.x, c.y)
			assert.Equal(t, c.want.N, got.N)
			for _, f := range []struct {
				name      string
				want, got float64
			}{{"A", float64(c.want.A), float64(got.A)}, {"B", float64(c.want.B), float64(got.B)}, {"R2", float64(c.want.R2), float64(got.R2)}} {
				if math.IsNaN(f.want) {
					assert.True(t, math.IsNaN(f.got), "%s = %v, want NaN", f.name, f.got)
				} else {
					assert.InDelta(t, f.want, f.got, 1e-12, f.name)
				}
			}
		})
	}
}

func TestRegressions(t *testing.T) {
	// Two repeats at 1, 2 and 3 threads on the host; two thread counts on
	// the vm, one at 4 threads for int.
	var samples []Observation
	add := func(target, workload string, threads, repeat int, seconds float64) {
		for range threads {
			samples = append(samples, Observation{CellKey: CellKey{Target: target, Workload: workload, QoS: 33, Threads: threads}, Repeat: repeat, EndNs: int64(seconds * 1e9), Work: 100, Unit: "loops", QoSApplied: 33, QoSFull: true})
		}
	}
	add("host", "fp", 1, 1, 1)    // 100/s
	add("host", "fp", 1, 2, 0.5)  // 200/s
	add("host", "fp", 2, 1, 0.5)  // 400/s
	add("host", "fp", 2, 2, 0.25) // 800/s
	add("host", "fp", 3, 1, 0.5)  // 600/s
	add("host", "fp", 3, 2, 0.25) // 1200/s
	add("vm", "fp", 1, 1, 1)
	add("vm", "fp", 2, 1, 1)
	add("vm", "int", 4, 1, 1)
	regs := Regressions(Cells(samples))
	require.Len(t, regs, 3)
	host := regs[0]
	assert.Equal(t, [2]any{"host", 33}, [2]any{host.Target, host.QoS})
	assert.Equal(t, 6, host.N, "one point per repeat")
	assert.Equal(t, 3, host.ThreadCounts)
	// Means (2, 550); Sxx = 4, Sxy = 1500: B = 375, A = -200.
	assert.InDelta(t, 375, float64(host.B), 1e-9)
	assert.InDelta(t, -200, float64(host.A), 1e-9)
	// The 12 slopes between points at different thread counts, sorted:
	// -200 200 200 200 250 300 400 500 550 600 700 800: median 350.
	assert.InDelta(t, 350, float64(host.Slope.Slope), 1e-9)
	assert.Equal(t, [2]Float{-200, 800}, [2]Float{host.Slope.Low, host.Slope.High}, "six points: Sen's interval covers every slope")

	vm := regs[1]
	assert.Equal(t, "vm", vm.Target)
	assert.Equal(t, 2, vm.ThreadCounts)
	assert.True(t, math.IsNaN(float64(vm.B)), "two thread counts only join two means")
	assert.True(t, vm.Slope.Slope.IsNaN())
	assert.True(t, vm.A.IsNaN(), "no line to print")
	assert.True(t, math.IsNaN(float64(regs[2].B)), "one thread count has no slope")
}

// Sen's interval on a clean line with noise: the slope is found, the
// interval holds it and is narrower than the slopes' range; one wild point
// cannot tip the estimate as it tips least squares.
func TestTheilSen(t *testing.T) {
	var x, y []float64
	noise := []float64{0.3, -0.2, 0.1, -0.4, 0.2, 0, -0.1, 0.4, -0.3, 0.1, 0.2, -0.2}
	for i, e := range noise {
		xi := float64(1 + i%4)
		x, y = append(x, xi), append(y, 10+5*xi+e)
	}
	ts := fitTheilSen(x, y)
	assert.InDelta(t, 5, float64(ts.Slope), 0.2)
	assert.Less(t, float64(ts.Low), float64(ts.Slope))
	assert.Greater(t, float64(ts.High), float64(ts.Slope))
	assert.Less(t, float64(ts.High-ts.Low), 1.0)

	y[0] = 1000 // a repeat that ran at full speed among starved ones
	assert.InDelta(t, 5, float64(fitTheilSen(x, y).Slope), 0.3)
	assert.Greater(t, math.Abs(float64(fitLine(x, y).B)-5), 30.0, "least squares is tipped")
	assert.True(t, fitTheilSen([]float64{1, 1}, []float64{2, 3}).Slope.IsNaN())
}
