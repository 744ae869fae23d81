package cli

import (
	"encoding/json"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// verdictRatioRe finds a side's ratio with its interval in a verdict's
// text: "host 33/9 = 272x [218..430]", "vm 33/9 = 1.003x [0.995..1.01]".
var verdictRatioRe = regexp.MustCompile(`\b(host|vm) (\d+)/(\d+) = ([0-9.]+)x \[([0-9.]+)\.\.([0-9.]+)\]`)

// resultsDirs are every results directory under testdata/results.
func resultsDirs(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pattern := range []string{"*", filepath.Join("constructed", "*")} {
		m, err := filepath.Glob(filepath.Join("..", "..", "testdata", "results", pattern, "run.json"))
		require.NoError(t, err)
		for _, f := range m {
			out = append(out, filepath.Dir(f))
		}
	}
	require.NotEmpty(t, out)
	return out
}

// printedAs says x is what the text printed as shown: x rounds to shown
// at the decimals shown has.
func printedAs(x float64, shown string) bool {
	v, err := strconv.ParseFloat(shown, 64)
	if err != nil {
		return false
	}
	decimals := 0
	if _, frac, ok := strings.Cut(shown, "."); ok {
		decimals = len(frac)
	}
	return math.Abs(x-v) <= 0.5*math.Pow(10, -float64(decimals))*(1+1e-9)
}

// One name, one number: the ratio every verdict line prints (the
// Hodges-Lehmann estimate with its interval) is the JSON's ratio_hl,
// ratio_hl_low and ratio_hl_high, for every results directory under
// testdata; the ratio of medians has its own name, and no field is called
// plain "ratio" beside it.
func TestVerdictJSONNamesTheRatioTheTextPrints(t *testing.T) {
	type side struct {
		Target         string   `json:"target"`
		High           int      `json:"high"`
		Low            int      `json:"low"`
		RatioHL        *float64 `json:"ratio_hl"`
		RatioHLLow     *float64 `json:"ratio_hl_low"`
		RatioHLHigh    *float64 `json:"ratio_hl_high"`
		RatioOfMedians *float64 `json:"ratio_of_medians"`
		Ratio          *float64 `json:"ratio"`
	}
	checked, differ := 0, 0
	for _, dir := range resultsDirs(t) {
		text, _, code := runRoot(t, map[string]string{"NO_COLOR": "1"}, "results", "show", dir)
		if code != 0 {
			continue // a damaged run: no verdict to print
		}
		out, stderr, code := runRoot(t, nil, "results", "show", "--json", dir)
		require.Equal(t, 0, code, "%s: %s", dir, stderr)
		var doc struct {
			Verdicts []struct {
				Host side `json:"host"`
				VM   side `json:"vm"`
			} `json:"verdicts"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &doc), dir)
		sides := map[string]side{}
		for _, v := range doc.Verdicts {
			for _, s := range []side{v.Host, v.VM} {
				assert.Nil(t, s.Ratio, "%s: no field is called ratio alone", dir)
				sides[s.Target+" "+strconv.Itoa(s.High)+"/"+strconv.Itoa(s.Low)] = s
			}
		}
		flat := strings.Join(strings.Fields(text), " ") // wrapped lines read as one
		for _, m := range verdictRatioRe.FindAllStringSubmatch(flat, -1) {
			s, ok := sides[m[1]+" "+m[2]+"/"+m[3]]
			if !ok || len(doc.Verdicts) != 1 {
				continue // several verdicts: which one printed it is the text's order
			}
			require.NotNil(t, s.RatioHL, "%s: %s", dir, m[0])
			require.NotNil(t, s.RatioHLLow, "%s: %s", dir, m[0])
			require.NotNil(t, s.RatioHLHigh, "%s: %s", dir, m[0])
			assert.True(t, printedAs(*s.RatioHL, m[4]), "%s: the text prints %s, the JSON's ratio_hl is %g", dir, m[0], *s.RatioHL)
			assert.True(t, printedAs(*s.RatioHLLow, m[5]), "%s: the text prints %s, the JSON's ratio_hl_low is %g", dir, m[0], *s.RatioHLLow)
			assert.True(t, printedAs(*s.RatioHLHigh, m[6]), "%s: the text prints %s, the JSON's ratio_hl_high is %g", dir, m[0], *s.RatioHLHigh)
			if s.RatioOfMedians != nil && !printedAs(*s.RatioOfMedians, m[4]) {
				differ++
			}
			checked++
		}
	}
	assert.Greater(t, checked, 40, "most testdata runs print a verdict with both ratios")
	assert.Positive(t, differ, "the ratio of medians is another number than the one printed, which is why it has another name")
}
