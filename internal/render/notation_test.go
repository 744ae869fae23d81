package render

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/qoslab/qoslab/internal/analysis"
)

func TestFormatRatio(t *testing.T) {
	cases := map[float64]string{
		3.1: "3.1x", 1.0096: "1.01x", 3: "3x", 12.34: "12.3x", 123.4: "123x", 1234.6: "1235x",
		0.5: "0.5x", 0.01234: "0.0123x", 9.996: "10x", 0: "0x", math.NaN(): "n/a", math.Inf(1): "n/a",
	}
	for r, want := range cases {
		assert.Equal(t, want, FormatRatio(analysis.Float(r)), "%v", r)
	}
}

func TestFormatP(t *testing.T) {
	cases := []struct {
		p     float64
		want  string
		tilde string // FormatSignificance at Alpha
	}{
		{0.0004, "p<0.001", "p<0.001"},
		{0.001, "p=0.001", "p=0.001"},
		{0.0123, "p=0.012", "p=0.012"},
		{0.049, "p=0.049", "p=0.049"},
		{0.05, "p=0.05", "~"},
		{0.4149, "p=0.41", "~"},
		{0.125, "p=0.12", "~"}, // exactly representable: rounds half to even
		{1, "p=1", "~"},
		{math.NaN(), "p=n/a", "~"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, FormatP(analysis.Float(c.p)), "p=%v", c.p)
		assert.Equal(t, c.tilde, FormatSignificance(analysis.Float(c.p), analysis.Alpha), "p=%v", c.p)
	}
}
