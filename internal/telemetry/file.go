package telemetry

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
)

// Log appends samples to a telemetry.jsonl. Lines are buffered and written
// out by Sync, which the runner calls after each cell run: telemetry is
// secondary to the samples, so it costs one write per cell, not per sample.
// It is safe for concurrent use.
type Log struct {
	mu  sync.Mutex
	f   *os.File
	buf bytes.Buffer
}

// OpenLog opens path for appending, creating it if need be.
func OpenLog(path string) (*Log, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open telemetry: %w", err)
	}
	return &Log{f: f}, nil
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
	if _, err := l.f.Write(l.buf.Bytes()); err != nil {
		return fmt.Errorf("write %s: %w", l.f.Name(), err)
	}
	l.buf.Reset()
	return l.f.Sync()
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
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read telemetry: %w", err)
	}
	defer f.Close()
	return Read(f, path)
}

// Read reads telemetry lines from r; name is used in notes and errors.
func Read(r io.Reader, name string) ([]Sample, []string, error) {
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
