package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func flags() (*pflag.FlagSet, *int, *string, *string) {
	fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
	repeat := fs.Int("repeat", 3, "")
	qos := fs.String("qos", "9,33", "")
	results := fs.String("results", "qoslab-results", "")
	return fs, repeat, qos, results
}

func settings(t *testing.T, env map[string]string, file string) *Settings {
	t.Helper()
	s := New(func(k string) string { return env[k] }, "results")
	if file != "" {
		s.Path = filepath.Join(t.TempDir(), "qoslab.yaml")
		require.NoError(t, os.WriteFile(s.Path, []byte(file), 0o644))
	}
	return s
}

func TestFlagsWinOverEnvironmentOverFile(t *testing.T) {
	file := "bench:\n  repeat: 5\n  qos: [background, utility]\nresults: /file\n"
	s := settings(t, map[string]string{"QOSLAB_BENCH_REPEAT": "7"}, file)
	fs, repeat, qos, results := flags()
	require.NoError(t, fs.Parse([]string{"--results", "/typed"}))
	src, err := s.Apply(fs, "bench")
	require.NoError(t, err)
	assert.Equal(t, 7, *repeat, "the environment beats the file")
	assert.Equal(t, "background,utility", *qos, "a YAML list is a comma-separated value")
	assert.Equal(t, "/typed", *results, "a typed flag beats everything")
	assert.Equal(t, "QOSLAB_BENCH_REPEAT", src.Name("repeat"))
	assert.Equal(t, "bench.qos in "+s.Path, src.Name("qos"))
	assert.Equal(t, "--results", src.Name("results"))
}

func TestSharedKeysAreTopLevel(t *testing.T) {
	s := settings(t, map[string]string{"QOSLAB_RESULTS": "/env"}, "")
	assert.Equal(t, "results", s.Key("bench", "results"))
	assert.Equal(t, "bench.repeat", s.Key("bench", "repeat"))
	assert.Equal(t, "QOSLAB_IMAGE_STORE", envName("image-store"))
	fs, _, _, results := flags()
	_, err := s.Apply(fs, "run")
	require.NoError(t, err)
	assert.Equal(t, "/env", *results)
}

func TestBadValuesNameTheirSource(t *testing.T) {
	s := settings(t, map[string]string{"QOSLAB_BENCH_REPEAT": "lots"}, "")
	fs, _, _, _ := flags()
	_, err := s.Apply(fs, "bench")
	assert.EqualError(t, err, `QOSLAB_BENCH_REPEAT "lots": want a whole number`)

	s = settings(t, nil, "bench:\n  repeat: lots\n")
	fs, _, _, _ = flags()
	_, err = s.Apply(fs, "bench")
	assert.EqualError(t, err, `bench.repeat in `+s.Path+` "lots": want a whole number`)
}

func TestUnknownKeysAreRefusedWithAGuess(t *testing.T) {
	s := settings(t, nil, "bench:\n  repaet: 4\nagnet: x\n")
	fs, _, _, _ := flags()
	s.Register(fs, "bench")
	fs2 := pflag.NewFlagSet("root", pflag.ContinueOnError)
	fs2.String("agent", "", "")
	s.Register(fs2, "")
	err := s.CheckKeys()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unknown keys agnet, bench.repaet")
	assert.Contains(t, err.Error(), "did you mean agent for agnet, bench.repeat for bench.repaet?")

	s = settings(t, nil, "")
	s.Path = "/no/such/qoslab.yaml"
	assert.ErrorContains(t, s.CheckKeys(), "/no/such/qoslab.yaml")
}

// A config "file" that is a device is refused at once, not read forever.
func TestConfigFileMustBeASmallRegularFile(t *testing.T) {
	s := settings(t, nil, "")
	s.Path = "/dev/zero"
	fs, _, _, _ := flags()
	_, err := s.Apply(fs, "bench")
	assert.EqualError(t, err, "config file /dev/zero: not a regular file (a character device); give a YAML config file")
}
