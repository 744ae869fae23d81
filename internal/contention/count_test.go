package contention

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A count is a number or all, as a flag or a spec writes it; run.json
// keeps what was asked, and a run.json written before "all" existed (a
// plain number) still loads.
func TestSpinnerCount(t *testing.T) {
	n, err := ParseSpinnerCount("--contention", " all ")
	require.NoError(t, err)
	assert.Equal(t, All, n)
	n, err = ParseSpinnerCount("--contention", "1_0")
	require.NoError(t, err)
	assert.Equal(t, SpinnerCount(10), n)
	assert.Equal(t, 5, All.count(5))
	assert.Equal(t, 2, SpinnerCount(2).count(5))
	_, err = ParseSpinnerCount("--contention", "2.5")
	assert.EqualError(t, err, `--contention "2.5": allowed 0..256 spinner threads or all (one per CPU)`)
	_, err = ParseSpinnerCount("", "257")
	assert.EqualError(t, err, `"257": allowed 0..256 spinner threads or all (one per CPU)`)

	for c, text := range map[SpinnerCount]string{All: `"all"`, 0: "0", 3: "3"} {
		b, err := json.Marshal(c)
		require.NoError(t, err)
		assert.Equal(t, text, string(b))
		var back SpinnerCount
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, c, back)
	}
	var old SpinnerCount
	assert.ErrorContains(t, json.Unmarshal([]byte(`999`), &old), "contention 999: allowed 0..256 spinner threads or all")
	assert.ErrorContains(t, json.Unmarshal([]byte(`"most"`), &old), `contention "most": allowed 0..256`)
	assert.True(t, All.Valid())
	assert.False(t, SpinnerCount(-2).Valid())
	assert.False(t, SpinnerCount(MaxSpinners+1).Valid())
}
