package experiment

import (
	"fmt"
	"path/filepath"

	"github.com/qoslab/qoslab/internal/results"
)

// UnfinishedError is a run that stopped before measuring every cell: the
// error, and how to finish it.
type UnfinishedError struct {
	Err error
	Dir string
}

func (e *UnfinishedError) Error() string { return fmt.Sprintf("%v\n%s", e.Err, e.Hint()) }
func (e *UnfinishedError) Unwrap() error { return e.Err }

// Hint says where the finished cells are and how to finish the run.
func (e *UnfinishedError) Hint() string {
	return fmt.Sprintf("what finished is in %s; finish the run with: qoslab run --resume %s", e.Dir, e.Dir)
}

// endNotRecordedError is a run whose end (time, outcome, error) could not
// be written to run.json, a full disk most often: run.json still reads as
// a run going on, so the terminal must say so, and what to do.
type endNotRecordedError struct {
	Dir string
	Err error
}

func (e *endNotRecordedError) Error() string {
	return fmt.Sprintf("how the run ended could not be recorded in %s (%v): it still reads as running or crashed; free space, then run qoslab run --resume %s, which records it and measures what is missing",
		filepath.Join(e.Dir, results.RunFile), e.Err, e.Dir)
}

func (e *endNotRecordedError) Unwrap() error { return e.Err }
