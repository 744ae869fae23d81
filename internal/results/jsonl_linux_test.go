//go:build linux

package results

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/testdisk"
)

func TestFullDisk(t *testing.T) {
	d, err := Create(testdisk.Tiny(t, "64k"), "full", time.Now())
	require.NoError(t, err)
	log, _, err := d.OpenSamples()
	require.NoError(t, err)
	defer log.Close()

	// Records of about 3 KB do not fit pages evenly, so the failing append
	// is written in part before the disk is full.
	detail := strings.Repeat("d", 3000)
	appended := 0
	for i := range 100 {
		run := cellRun("host/fp/33/2/"+strconv.Itoa(i), "host", 1, 2)
		for j := range run {
			run[j].QoSDetail = detail
		}
		if err = log.Append(run...); err != nil {
			break
		}
		appended += len(run)
	}
	require.Error(t, err, "a 64 KiB disk must fill")
	require.NotZero(t, appended)
	assert.True(t, errors.Is(err, syscall.ENOSPC), "%v", err)
	path := filepath.Join(d.Path, SamplesFile)
	fi, serr := os.Stat(path)
	require.NoError(t, serr)
	assert.ErrorContains(t, err, path)
	assert.ErrorContains(t, err, "no space left on device")
	assert.ErrorContains(t, err, strconv.FormatInt(fi.Size(), 10)+" bytes ("+strconv.Itoa(appended)+" records) already safe")
	assert.ErrorContains(t, err, "no partial line")

	b, rerr := os.ReadFile(path)
	require.NoError(t, rerr)
	assert.True(t, strings.HasSuffix(string(b), "}\n"), "the file ends on a whole line")
	recs, torn, rerr := ReadSamples(path)
	require.NoError(t, rerr)
	assert.Nil(t, torn, "nothing of the failed append remains")
	assert.Len(t, recs, appended)

	// Still full: a second failure leaves the file as it was, too.
	again := cellRun("again", "host", 1, 2)
	for j := range again {
		again[j].QoSDetail = detail
	}
	require.Error(t, log.Append(again...))
	fi2, serr := os.Stat(path)
	require.NoError(t, serr)
	assert.Equal(t, fi.Size(), fi2.Size())

	// run.json cannot be replaced either, but the old one stays whole.
	d.Run.Notes = []string{strings.Repeat("n", 64<<10)}
	err = d.Finish(time.Now(), errors.New("disk full"))
	assert.ErrorContains(t, err, filepath.Join(d.Path, RunFile))
	assert.ErrorContains(t, err, "no space left on device")
	reopened, oerr := Open(d.Path)
	require.NoError(t, oerr, "the previous run.json is intact")
	assert.Nil(t, reopened.Run.Finished)
	entries, derr := os.ReadDir(d.Path)
	require.NoError(t, derr)
	assert.Len(t, entries, 2, "run.json and samples.jsonl, no temporary file")
}
