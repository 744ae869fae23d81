package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/qoslab/qoslab/internal/results"
)

// removable opens the results directory at path and takes its lock, so
// that no run or resume starts in it while it is removed; it refuses what
// is not a results directory and one in use.
func removable(path string) (*results.Dir, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", path)
	}
	if _, err := os.Stat(filepath.Join(path, results.RunFile)); err != nil {
		return nil, fmt.Errorf("%s has no %s: not a qoslab results directory, left alone", path, results.RunFile)
	}
	d := &results.Dir{Path: path}
	if _, err := d.Lock(); err != nil {
		var inUse *results.InUseError
		if errors.As(err, &inUse) {
			return nil, fmt.Errorf("%s is being written by qoslab (pid %d): stop that run first", path, inUse.Holder.PID)
		}
		return nil, err
	}
	return d, nil
}

// removeDirs removes each locked results directory and says so, then the
// space freed.
func removeDirs(w io.Writer, dirs []*results.Dir, verb string) error {
	var freed int64
	for _, d := range dirs {
		size := dirSize(d.Path)
		if err := os.RemoveAll(d.Path); err != nil {
			return fmt.Errorf("remove %s: %w", d.Path, err)
		}
		freed += size
		fmt.Fprintf(w, "%s %s\n", verb, d.Path)
	}
	if len(dirs) > 1 {
		fmt.Fprintf(w, "%s %s, %s\n", verb, dirCount(len(dirs)), mib(freed))
	}
	return nil
}

func dirSize(path string) int64 {
	var n int64
	_ = filepath.WalkDir(path, func(_ string, de fs.DirEntry, err error) error {
		if err == nil && !de.IsDir() {
			if info, err := de.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

func mib(n int64) string { return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB" }

// dirCount is "1 results directory", "3 results directories".
func dirCount(n int) string {
	if n == 1 {
		return "1 results directory"
	}
	return strconv.Itoa(n) + " results directories"
}
