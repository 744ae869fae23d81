package qos

import (
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The five classes set and read back on real threads of a Mac, through
// the libSystem calls purego binds (pthread_set_qos_class_self_np, then
// pthread_get_qos_class_np): five OS threads at once, each holding its own
// class while the others hold theirs, read back again after all five are
// set. pthreadApplied's cases cover the logic on every OS; this is the
// calls themselves.
func TestQoSOnThisMac(t *testing.T) {
	if runtime.GOOS != "darwin" {
		t.Skip("pthread QoS classes are macOS's: CI's hosted macOS job runs this (Linux's mapping is tested by apply_linux_test.go)")
	}
	type result struct {
		applied Applied
		read    Class
		detail  string
		err     error
	}
	results := make([]result, len(all))
	var set, done sync.WaitGroup
	release := make(chan struct{})
	set.Add(len(all))
	done.Add(len(all))
	for i, c := range all {
		go func() {
			// The thread keeps its class and ends with the goroutine, as
			// every measuring thread does.
			runtime.LockOSThread()
			defer done.Done()
			results[i].applied = ApplySelf(c)
			set.Done()
			<-release
			results[i].read, results[i].detail, results[i].err = ReadSelf()
		}()
	}
	set.Wait()
	close(release)
	done.Wait()
	for i, c := range all {
		r := results[i]
		t.Logf("%s: applied %s (%s), read back %s (%s)", c, r.applied.Applied, r.applied.Detail, r.read, r.detail)
		assert.True(t, r.applied.Full, "%s: %s", c, r.applied.Reason)
		assert.Equal(t, c, r.applied.Applied, c.String())
		if assert.NoError(t, r.err, c.String()) {
			assert.Equal(t, c, r.read, "%s read back while the other four threads held theirs", c)
			assert.True(t, strings.HasPrefix(r.detail, pthreadQoSNames[uint32(c)]+" "), r.detail)
		}
	}
	assert.Contains(t, Support(), "pthread_set_qos_class_self_np")
}
