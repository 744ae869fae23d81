package analysis

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFloatMarshalsUndefinedAsNull(t *testing.T) {
	type doc struct {
		S  OrderStats `json:"s"`
		X  Float      `json:"x"`
		Xs []Float    `json:"xs"`
	}
	in := doc{S: OrderStatsOf(nil), X: 1.5, Xs: []Float{Float(math.Inf(1)), 2, Float(math.NaN())}}
	b, err := json.Marshal(in)
	require.NoError(t, err, "encoding/json alone fails on NaN")
	assert.JSONEq(t, `{"s":{"n":0,"median":null,"min":null,"max":null,"ci_low":null,"ci_high":null,"ci_confidence":null},"x":1.5,"xs":[null,2,null]}`, string(b))

	var out doc
	require.NoError(t, json.Unmarshal(b, &out))
	assert.True(t, out.S.Median.IsNaN(), "null reads back as NaN")
	assert.Equal(t, 1.5, float64(out.X))
	assert.Equal(t, 2.0, float64(out.Xs[1]))
	assert.True(t, out.Xs[0].IsNaN(), "infinity was not a number to keep either")

	b, err = json.Marshal(Float(1e21))
	require.NoError(t, err)
	assert.Equal(t, "1e+21", string(b), "as encoding/json writes a float64")
	assert.Error(t, json.Unmarshal([]byte(`"x"`), &out.X))
}
