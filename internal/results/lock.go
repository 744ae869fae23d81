package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// LockFile is the results directory's lock: held (flock, exclusive) for the
// whole life of a run or a resume, so that two processes never append to
// one directory; it holds the holder's pid and start time for the message
// the next one gets.
const LockFile = ".lock"

// Holder is who holds a results directory's lock.
type Holder struct {
	PID   int       `json:"pid"`
	Since time.Time `json:"since"`
}

// InUseError is a results directory another process is running in.
type InUseError struct {
	Path   string
	Holder Holder
}

func (e *InUseError) Error() string {
	who := "another qoslab"
	if e.Holder.PID > 0 {
		who = fmt.Sprintf("qoslab (pid %d, since %s)", e.Holder.PID, e.Holder.Since.Local().Format("15:04:05"))
	}
	return fmt.Sprintf("results %s is in use by %s: wait for it or stop it", e.Path, who)
}

// Lock takes d's lock for this process, without waiting: a directory in use
// is an *InUseError naming the holder. unlock releases it (the lock also
// goes when the process dies, however it dies).
func (d *Dir) Lock() (unlock func(), err error) {
	path := filepath.Join(d.Path, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", d.Path, err)
	}
	ok, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if !ok {
		h, _ := readHolder(path)
		f.Close()
		return nil, &InUseError{Path: d.Path, Holder: h}
	}
	b, _ := json.Marshal(Holder{PID: os.Getpid(), Since: time.Now().UTC()})
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt(append(b, '\n'), 0)
	}
	unlock = func() {
		_ = f.Truncate(0)
		f.Close()
	}
	d.unlock = unlock
	return unlock, nil
}

// Running reports whether a process holds the lock of the results
// directory at path, and who: a probe that takes the lock and lets it go at
// once, so a holder that died (its lock gone with it) is not running.
func Running(path string) (Holder, bool) {
	lp := filepath.Join(path, LockFile)
	f, err := os.OpenFile(lp, os.O_RDWR, 0)
	if err != nil {
		return Holder{}, false
	}
	defer f.Close()
	ok, err := tryLock(f)
	if err != nil || ok {
		return Holder{}, false // taken by us, so free (closing f lets it go)
	}
	h, _ := readHolder(lp)
	return h, true
}

func readHolder(path string) (Holder, error) {
	var h Holder
	b, err := os.ReadFile(path)
	if err != nil {
		return h, err
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return h, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

// String is "pid 1234".
func (h Holder) String() string { return "pid " + strconv.Itoa(h.PID) }
