package telemetry

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"sync"

	"github.com/qoslab/qoslab/internal/atomicfile"
)

// Log appends samples to a telemetry.jsonl. Lines are buffered and written
// out by Sync, which the runner calls after each cell run: telemetry is
// secondary to the samples, so it costs one write per cell, not per sample.
// A write that fails (a full disk) is cut back to the last whole line, so
// the file never keeps part of one. It is safe for concurrent use.
type Log struct {
	mu   sync.Mutex
	f    *os.File
	buf  bytes.Buffer
	size int64 // the file's length in whole lines, all synced
}

// OpenLog opens path for appending, creating it if need be.
func OpenLog(path string) (*Log, error) {
	l, _, err := OpenLogKeeping(path, nil)
	return l, err
}

// OpenLogKeeping opens path for appending after making it whole: a last line
// without its newline (a crash or a full disk cut the write short) is cut
// off, and when keep is not nil, the samples of cell runs keep refuses (runs
// that did not finish, which a resume measures again: their telemetry
// would be there twice) are dropped. The file is rewritten atomically when
// anything goes; notes say what went.
func OpenLogKeeping(path string, keep func(cell string, repeat int) bool) (*Log, []string, error) {
	b, err := os.ReadFile(path) //nolint:gosec // G304: the run's telemetry.jsonl in its results directory
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("read telemetry: %w", err)
	}
	var notes []string
	whole := b
	if i := bytes.LastIndexByte(b, '\n'); i+1 < len(b) {
		whole = b[:i+1]
		notes = append(notes, fmt.Sprintf("%s: cut off a last line without its end (%d bytes), left by a crash or a full disk", path, len(b)-len(whole)))
	}
	kept := whole
	if keep != nil && len(whole) > 0 {
		var out bytes.Buffer
		dropped := map[string]int{}
		for _, line := range bytes.SplitAfter(whole, []byte{'\n'}) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			var head struct {
				Cell   string `json:"cell"`
				Repeat int    `json:"repeat"`
			}
			if json.Unmarshal(line, &head) == nil && head.Cell != "" && !keep(head.Cell, head.Repeat) {
				dropped[fmt.Sprintf("%s repeat %d", head.Cell, head.Repeat)]++
				continue
			}
			out.Write(line)
		}
		if len(dropped) > 0 {
			kept = out.Bytes()
			for _, k := range slices.Sorted(maps.Keys(dropped)) {
				notes = append(notes, fmt.Sprintf("%s: dropped %d samples of %s, which did not finish and is measured again", path, dropped[k], k))
			}
		}
	}
	if len(kept) != len(b) {
		if err := atomicfile.Write(path, kept); err != nil {
			return nil, notes, err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644) //nolint:gosec // G302, G304: the run's telemetry.jsonl, a result readable like the run's other results
	if err != nil {
		return nil, notes, fmt.Errorf("open telemetry: %w", err)
	}
	return &Log{f: f, size: int64(len(kept))}, notes, nil
}

// Append buffers samples, stamping each with the schema version.
func (l *Log) Append(samples ...Sample) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range samples {
		s.SchemaVersion = SchemaVersion
		b, err := json.Marshal(s)
		if err != nil {
			return fmt.Errorf("telemetry sample: %w", err)
		}
		l.buf.Write(b)
		l.buf.WriteByte('\n')
	}
	return nil
}

// Sync writes the buffered samples and syncs the file.
func (l *Log) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buf.Len() == 0 {
		return nil
	}
	n := int64(l.buf.Len())
	_, err := l.f.Write(l.buf.Bytes())
	if err == nil {
		err = l.f.Sync()
	}
	l.buf.Reset()
	if err != nil {
		// No part of a line may stay for the next append to bury.
		if terr := l.f.Truncate(l.size); terr != nil {
			return fmt.Errorf("write %s: %w; cutting it back to its last whole line also failed (%w): resume cuts it", l.f.Name(), err, terr)
		}
		return fmt.Errorf("write %s: %w; cut back to its last whole line, this cell run's telemetry is lost", l.f.Name(), err)
	}
	l.size += n
	return nil
}

// Close syncs and closes the log.
func (l *Log) Close() error {
	err := l.Sync()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadFile reads a telemetry.jsonl. A missing file is no telemetry (nil, nil,
// nil). A line that does not parse (a crash mid-write) is skipped and named
// in the notes; an unknown schema major is an error.
func ReadFile(path string) ([]Sample, []string, error) {
	f, err := os.Open(path) //nolint:gosec // G304: a run's telemetry.jsonl the user names
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read telemetry: %w", err)
	}
	defer f.Close()
	return readSamples(f, path)
}

// readSamples reads telemetry lines from r; name is used in notes and errors.
func readSamples(r io.Reader, name string) ([]Sample, []string, error) {
	var out []Sample
	var notes []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var s Sample
		if err := json.Unmarshal(b, &s); err != nil {
			notes = append(notes, fmt.Sprintf("%s line %d skipped: %v", name, line, err))
			continue
		}
		if err := CheckVersion(s.SchemaVersion); err != nil {
			return nil, notes, fmt.Errorf("%s line %d: %w", name, line, err)
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return out, notes, fmt.Errorf("read %s: %w", name, err)
	}
	return out, notes, nil
}
