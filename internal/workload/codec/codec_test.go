package codec

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/workload/catalog"
)

func encode(t testing.TB, codec string, level int, data []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	enc, err := newEncoder(codec, level, &out)
	require.NoError(t, err)
	_, err = enc.Write(data)
	require.NoError(t, err)
	require.NoError(t, enc.Close())
	return out.Bytes()
}

func decode(t testing.TB, codec string, compressed []byte) []byte {
	t.Helper()
	dec, err := newDecoder(codec, bytes.NewReader(compressed))
	require.NoError(t, err)
	defer dec.Close()
	out, err := io.ReadAll(dec)
	require.NoError(t, err)
	return out
}

// levelEdges returns the levels worth a round trip: the default and both ends.
func levelEdges(codec string) []int {
	lv, _ := catalog.LookupCodec(codec)
	edges := []int{0}
	if lv.MaxLevel > 0 {
		edges = append(edges, lv.MinLevel, lv.MaxLevel)
	}
	return edges
}

func TestRoundTripEveryCodecAndLevelEdge(t *testing.T) {
	data := generated(t, 300_000, 0, 11, DefaultRatio)
	for _, codec := range Codecs() {
		for _, level := range levelEdges(codec) {
			t.Run(fmt.Sprintf("%s level %d", codec, level), func(t *testing.T) {
				compressed := encode(t, codec, level, data)
				assert.Less(t, len(compressed), len(data), "ratio-3 data must shrink")
				assert.Equal(t, data, decode(t, codec, compressed))
			})
		}
	}
}

func TestRoundTripEdgeInputs(t *testing.T) {
	inputs := map[string][]byte{
		"empty":        {},
		"one byte":     {42},
		"random 1 MiB": generated(t, 1<<20, 0, 3, 1),
	}
	for _, codec := range Codecs() {
		for name, data := range inputs {
			t.Run(codec+" "+name, func(t *testing.T) {
				got := decode(t, codec, encode(t, codec, 0, data))
				assert.Equal(t, len(data), len(got))
				assert.True(t, bytes.Equal(data, got))
			})
		}
	}
}

func TestCompressBoundHoldsForIncompressibleData(t *testing.T) {
	data := generated(t, 4<<20, 0, 5, 1)
	for _, codec := range Codecs() {
		for _, level := range levelEdges(codec) {
			got := len(encode(t, codec, level, data))
			assert.LessOrEqual(t, int64(got), compressBound(int64(len(data))), "%s level %d", codec, level)
		}
	}
}

func TestLevelsChangeTheOutput(t *testing.T) {
	// Levels must reach the library, not be dropped on the way.
	data := generated(t, 1<<20, 0, 8, DefaultRatio)
	for _, codec := range Codecs() {
		lv, ok := catalog.LookupCodec(codec)
		require.True(t, ok, codec)
		if lv.MaxLevel == 0 {
			continue
		}
		low := encode(t, codec, lv.MinLevel, data)
		high := encode(t, codec, lv.MaxLevel, data)
		assert.Less(t, len(high), len(low), "%s level %d should compress better than %d", codec, lv.MaxLevel, lv.MinLevel)
	}
}

func TestCodecsStartNoGoroutines(t *testing.T) {
	data := generated(t, 4<<20, 0, 2, DefaultRatio)
	for _, codec := range Codecs() {
		t.Run(codec, func(t *testing.T) {
			before := runtime.NumGoroutine()
			var out bytes.Buffer
			enc, err := newEncoder(codec, 0, &out)
			require.NoError(t, err)
			_, err = enc.Write(data)
			require.NoError(t, err)
			// Other goroutines (an earlier test's) may end meanwhile; none may start.
			assert.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines while encoding")
			require.NoError(t, enc.Close())

			dec, err := newDecoder(codec, bytes.NewReader(out.Bytes()))
			require.NoError(t, err)
			_, err = io.ReadFull(dec, make([]byte, 1<<20))
			require.NoError(t, err)
			assert.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines while decoding")
			require.NoError(t, dec.Close())
		})
	}
}

func TestCheckCodecErrors(t *testing.T) {
	type refusal struct {
		codec string
		level int
		want  []string // substrings of the error
	}
	cases := []refusal{
		{"brotli", 0, []string{`"brotli"`, "zstd, gzip, lz4"}},
		{"", 0, []string{`""`, "zstd"}},
		{zstdCodec, 23, []string{"23", "1..22"}},
		{zstdCodec, -1, []string{"-1", "1..22"}},
		{gzipCodec, 10, []string{"10", "1..9"}},
		{lz4Codec, 10, []string{"10", "1..9"}},
	}
	if runtime.GOOS == "darwin" {
		cases = append(cases, refusal{lzfseCodec, 3, []string{"lzfse level 3", "use 0"}})
	} else {
		cases = append(cases, refusal{lzfseCodec, 0, []string{`codec "lzfse" needs macOS libcompression; available here: zstd, gzip, lz4`}})
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s %d", c.codec, c.level), func(t *testing.T) {
			err := checkCodec(c.codec, c.level)
			require.Error(t, err)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
			_, encErr := newEncoder(c.codec, c.level, io.Discard)
			assert.EqualError(t, encErr, err.Error(), "NewEncoder must refuse the same way")
		})
	}
}

func TestCodecsListsWhatWorks(t *testing.T) {
	codecs := Codecs()
	assert.Equal(t, []string{zstdCodec, gzipCodec, lz4Codec}, codecs[:3])
	assert.Equal(t, runtime.GOOS == "darwin", len(codecs) == 4 && codecs[3] == lzfseCodec)
	for _, c := range codecs {
		assert.NoError(t, checkCodec(c, 0), c)
		assert.NotEqual(t, "bin", extension(c), c)
	}
	_, err := newDecoder("nope", strings.NewReader(""))
	assert.ErrorContains(t, err, `"nope"`)
}

func TestCheckLevelIsPortable(t *testing.T) {
	assert.NoError(t, checkLevel(lzfseCodec, 0), "lzfse is a known codec everywhere, available or not")
	assert.ErrorContains(t, checkLevel(lzfseCodec, 3), "has no levels")
	assert.ErrorContains(t, checkLevel(zstdCodec, 40), "zstd level 40: allowed 1..22")
	assert.ErrorContains(t, checkLevel("rar", 0), `unknown codec "rar": allowed gzip, lz4, lzfse, zstd`)
	assert.NoError(t, checkLevel(gzipCodec, 9))
}
