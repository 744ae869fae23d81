package hostview

import (
	"os"
	"time"
)

// Reader takes snapshots of the host. It keeps its buffers from one
// snapshot to the next and is not safe for concurrent use.
type Reader struct {
	// root is where /proc is found ("/"; a fixture tree in tests).
	root string
	// self is the controller's pid: it and its descendants are the run's
	// own.
	self int
	now  func() time.Time
	sys  sysReader
}

// NewReader reads this host, the calling process being the controller.
func NewReader() *Reader {
	return &Reader{root: "/", self: os.Getpid(), now: time.Now}
}

// Snapshot reads the host: t's vCPU threads first, then every process's CPU
// time. It never fails: what could not be read is a note, and a Use made
// from it says the rest is not recorded.
func (r *Reader) Snapshot(t Target) Snapshot {
	s := Snapshot{VMPID: t.PID}
	r.sys.read(r, t, &s)
	if s.ProcsRead {
		markOwn(s.Procs, r.self)
	}
	return s
}

// Close lets go of what the reader keeps open between snapshots (Linux:
// each process's stat file). A snapshot after it opens them again.
func (r *Reader) Close() { r.sys.Close() }
