package suggest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDistance(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"treads", "threads", 1}, {"same", "same", 0},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, editDistance(c.a, c.b), "%q %q", c.a, c.b)
	}
}

func TestClosest(t *testing.T) {
	keys := []string{"workload", "qos", "threads", "loops"}
	assert.Equal(t, "threads", Closest("treads", keys))
	assert.Equal(t, "threads", Closest("THREADS", keys), "case is ignored")
	assert.Equal(t, "workload", Closest("wrkloda", keys), "3 edits are allowed for long names")
	assert.Equal(t, "", Closest("zzz", keys), "nothing near enough")
	assert.Equal(t, "", Closest("x", nil))
}

func TestOneOf(t *testing.T) {
	assert.NoError(t, OneOf("--format", "csv", []string{"table", "csv"}))
	assert.EqualError(t, OneOf("--format", "tabel", []string{"table", "csv", "json"}), `--format "tabel": allowed table, csv, json; did you mean table?`)
	assert.EqualError(t, OneOf("--target", "cloud", []string{"host", "vm"}), `--target "cloud": allowed host, vm`)
}
