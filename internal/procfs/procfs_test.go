package procfs

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNextField(t *testing.T) {
	var got []string
	rest := []byte("  cpu0 12\t34\n")
	for {
		var f []byte
		f, rest = NextField(rest)
		if f == nil {
			break
		}
		got = append(got, string(f))
	}
	assert.Equal(t, []string{"cpu0", "12", "34"}, got)
}

func TestParseNumbers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{{"0", 0, true}, {"18446744073709551615", 1<<64 - 1, true}, {"18446744073709551616", 0, false}, {"", 0, false}, {"12a", 0, false}, {"-1", 0, false}} {
		v, ok := ParseDecimal([]byte(tc.in))
		assert.Equal(t, tc.ok, ok, tc.in)
		assert.Equal(t, tc.want, v, tc.in)
	}
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{{"-20", -20, true}, {"19", 19, true}, {"-", 0, false}, {"4294967296", 0, false}} {
		v, ok := ParseSigned([]byte(tc.in))
		assert.Equal(t, tc.ok, ok, tc.in)
		assert.Equal(t, tc.want, v, tc.in)
	}
}

func TestClip(t *testing.T) {
	assert.Equal(t, "short", Clip([]byte("short\n")))
	assert.Equal(t, strings.Repeat("x", 80)+"...", Clip([]byte(strings.Repeat("x", 100))))
}
