package debkernel

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// recordFile is the file, in each extract, that says where its package
// came from and how its index was checked.
const recordFile = "qoslab-fetch.json"

// Record is what Fetch knew of a kernel package it extracted.
type Record struct {
	Source    string     `json:"source"` // the mirror and suite: URI SUITE
	Package   string     `json:"package"`
	Version   string     `json:"version"`
	Arch      string     `json:"arch"`
	URL       string     `json:"url"`
	SHA256    string     `json:"sha256"`
	Size      int64      `json:"size"`
	Index     IndexCheck `json:"index"`
	FetchedAt time.Time  `json:"fetched_at"`
}

// Verified tells whether the package came through a verified index.
func (r Record) Verified() bool { return r.Index.SignedBy != nil && r.Index.Unverified == "" }

func writeRecord(dir string, r Record) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, recordFile), append(b, '\n'), 0o644) //nolint:gosec // G306: the fetch record is readable by others, as the kernel it describes
}

// ReadRecord reads the record of the extract in dir; an extract made
// before records were kept has none, which is nil and no error.
func ReadRecord(dir string) (*Record, error) {
	b, err := os.ReadFile(filepath.Join(dir, recordFile)) //nolint:gosec // G304: the fetch record in the kernel cache
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, recordFile), err)
	}
	return &r, nil
}
