package qemu

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/hv"
)

const fakeGreeting = `{"QMP": {"version": {"qemu": {"micro": 22, "minor": 2, "major": 7}, "package": "Debian"}, "capabilities": ["oob"]}}`

// fakeQMPRequest is a command as the fake server reads it.
type fakeQMPRequest struct {
	Execute   string          `json:"execute"`
	Arguments json.RawMessage `json:"arguments"`
	ID        string          `json:"id"`
}

// fakeQMPConn is the server's side of one client connection.
type fakeQMPConn struct {
	t    *testing.T
	conn net.Conn
	dec  *json.Decoder
}

// The fake server runs outside the test's goroutine, so it reports with
// assert, never require.

func (c *fakeQMPConn) read() fakeQMPRequest {
	var r fakeQMPRequest
	assert.NoError(c.t, c.dec.Decode(&r))
	return r
}

// waitClose reads until the client hangs up.
func (c *fakeQMPConn) waitClose() {
	var r fakeQMPRequest
	for c.dec.Decode(&r) == nil {
	}
}

func (c *fakeQMPConn) send(line string) {
	_, err := c.conn.Write([]byte(line + "\r\n"))
	assert.NoError(c.t, err)
}

func (c *fakeQMPConn) reply(id string, ret any) {
	b, err := json.Marshal(map[string]any{"return": ret, "id": id})
	assert.NoError(c.t, err)
	c.send(string(b))
}

// handshake greets the client and answers qmp_capabilities.
func (c *fakeQMPConn) handshake() {
	c.send(fakeGreeting)
	r := c.read()
	assert.Equal(c.t, "qmp_capabilities", r.Execute)
	c.reply(r.ID, map[string]any{})
}

// serveFakeQMP listens on a unix socket and runs script on the first
// connection; it returns the socket's path. The test waits for script.
func serveFakeQMP(t *testing.T, script func(c *fakeQMPConn)) string {
	path := filepath.Join(t.TempDir(), "qmp.sock")
	ln, err := net.Listen("unix", path)
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		script(&fakeQMPConn{t: t, conn: conn, dec: json.NewDecoder(conn)})
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
	})
	return path
}

func dialFake(t *testing.T, path string) *qmpClient {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := dialQMP(ctx, path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestQMPEventsBetweenCommandAndReply(t *testing.T) {
	path := serveFakeQMP(t, func(c *fakeQMPConn) {
		c.handshake()
		r := c.read()
		assert.Equal(t, "query-cpus-fast", r.Execute)
		c.send(`{"timestamp": {"seconds": 1700000000, "microseconds": 5}, "event": "RTC_CHANGE", "data": {"offset": 1}}`)
		c.send(`{"return": [
			{"cpu-index": 1, "thread-id": 2002, "qom-path": "/machine/unattached/device[1]", "target": "x86_64"},
			{"cpu-index": 0, "thread-id": 2001, "qom-path": "/machine/unattached/device[0]", "target": "x86_64"}
		], "id": "` + r.ID + `"}`)
		r = c.read()
		assert.Equal(t, "query-status", r.Execute)
		c.reply(r.ID, map[string]any{"status": "running", "running": true, "singlestep": false})
		c.waitClose()
	})
	c := dialFake(t, path)
	assert.Equal(t, "7.2.22", c.version.String())

	ctx := context.Background()
	threads, err := c.vcpuThreads(ctx)
	require.NoError(t, err)
	assert.Equal(t, []int{2001, 2002}, threads, "by vCPU index")

	st, err := c.status(ctx)
	require.NoError(t, err)
	assert.Equal(t, qmpStatus{Running: true, Status: "running"}, st)

	events := c.recordedEvents()
	require.Len(t, events, 1)
	assert.Equal(t, "RTC_CHANGE", events[0].Name)
	assert.Equal(t, int64(1700000000), events[0].At.Unix())
	assert.Empty(t, c.shutdownReason())
}

func TestQMPRepliesMatchedByID(t *testing.T) {
	path := serveFakeQMP(t, func(c *fakeQMPConn) {
		c.handshake()
		first, second := c.read(), c.read()
		// Answer in the opposite order, each with its own command's name.
		c.reply(second.ID, map[string]any{"status": second.Execute, "running": false})
		c.reply(first.ID, map[string]any{"status": first.Execute, "running": false})
		c.waitClose()
	})
	c := dialFake(t, path)

	var wg sync.WaitGroup
	results := make([]string, 2)
	commands := []string{"query-status", "query-other-status"}
	for i, cmd := range commands {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var st qmpStatus
			if assert.NoError(t, c.execute(context.Background(), cmd, nil, &st)) {
				results[i] = st.Status
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, commands, results)
}

func TestQMPErrorReply(t *testing.T) {
	path := serveFakeQMP(t, func(c *fakeQMPConn) {
		c.handshake()
		r := c.read()
		assert.JSONEq(t, `{"id-list": [1, 2]}`, string(r.Arguments))
		c.send(`{"error": {"class": "CommandNotFound", "desc": "The command frobnicate has not been found"}, "id": "` + r.ID + `"}`)
		c.waitClose()
	})
	c := dialFake(t, path)
	err := c.execute(context.Background(), "frobnicate", map[string]any{"id-list": []int{1, 2}}, nil)
	var qe *qmpError
	require.ErrorAs(t, err, &qe)
	assert.Equal(t, "CommandNotFound", qe.Class)
	assert.Equal(t, "QMP frobnicate: CommandNotFound: The command frobnicate has not been found", err.Error())
}

func TestQMPQuitAndShutdownEvent(t *testing.T) {
	tests := []struct {
		name string
		// replies: QEMU 7 answers quit before closing; a racing exit closes
		// the socket first.
		replies bool
	}{
		{"reply then close", true},
		{"close without reply", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := serveFakeQMP(t, func(c *fakeQMPConn) {
				c.handshake()
				r := c.read()
				assert.Equal(t, "quit", r.Execute)
				if tt.replies {
					c.reply(r.ID, map[string]any{})
				}
				c.send(`{"timestamp": {"seconds": 1700000001, "microseconds": 0}, "event": "SHUTDOWN", "data": {"guest": false, "reason": "host-qmp-quit"}}`)
			})
			c := dialFake(t, path)
			require.NoError(t, c.quit(context.Background()))
			<-c.readDone
			assert.Equal(t, "host-qmp-quit", c.shutdownReason())
			err := c.execute(context.Background(), "query-status", nil, nil)
			assert.ErrorIs(t, err, errQMPClosed, "commands after the end fail at once")
		})
	}
}

func TestQMPConnectionLostDuringCommand(t *testing.T) {
	path := serveFakeQMP(t, func(c *fakeQMPConn) {
		c.handshake()
		_ = c.read()
		// QEMU dies with the command unanswered.
	})
	c := dialFake(t, path)
	err := c.execute(context.Background(), "query-status", nil, nil)
	assert.ErrorIs(t, err, errQMPClosed)
}

func TestQMPCommandContext(t *testing.T) {
	release := make(chan struct{})
	path := serveFakeQMP(t, func(c *fakeQMPConn) {
		c.handshake()
		_ = c.read()
		<-release
	})
	defer close(release)
	c := dialFake(t, path)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := c.execute(ctx, "query-status", nil, nil)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	c.mu.Lock()
	assert.Empty(t, c.pending, "an abandoned command is forgotten")
	c.mu.Unlock()
}

func TestQMPHandshakeFailures(t *testing.T) {
	tests := []struct {
		name   string
		script func(c *fakeQMPConn, release <-chan struct{})
		want   string
	}{
		{
			// QEMU serves one client: a second one is connected but never greeted.
			name:   "no greeting",
			script: func(c *fakeQMPConn, release <-chan struct{}) { <-release },
			want:   "no greeting (is another client connected?",
		},
		{
			name:   "not QMP",
			script: func(c *fakeQMPConn, release <-chan struct{}) { c.send(`{"hello": "world"}`); <-release },
			want:   "not a QMP greeting",
		},
		{
			name: "capabilities refused",
			script: func(c *fakeQMPConn, release <-chan struct{}) {
				c.send(fakeGreeting)
				r := c.read()
				c.send(`{"error": {"class": "GenericError", "desc": "Capabilities negotiation is already complete"}, "id": "` + r.ID + `"}`)
				<-release
			},
			want: "QMP qmp_capabilities: GenericError: Capabilities negotiation is already complete",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{})
			path := serveFakeQMP(t, func(c *fakeQMPConn) { tt.script(c, release) })
			defer close(release)
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			c, err := dialQMP(ctx, path)
			require.Error(t, err)
			assert.Nil(t, c)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestQMPNoSocket(t *testing.T) {
	_, err := dialQMP(context.Background(), filepath.Join(t.TempDir(), "absent.sock"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "absent.sock")
}

// The power button is QMP's system_powerdown, sent on a connection made for
// it (a detached or attached VM), and only to a VM of this backend that
// has not ended.
func TestPressPowerButton(t *testing.T) {
	commands := make(chan string, 1)
	path := serveFakeQMP(t, func(c *fakeQMPConn) {
		c.handshake()
		r := c.read()
		commands <- r.Execute
		c.reply(r.ID, map[string]any{})
		c.waitClose()
	})
	m := newMachine(State{Info: hv.MachineInfo{Name: "pwr", StateDir: t.TempDir()}, QMPSocket: path})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, PressPowerButton(ctx, m))
	assert.Equal(t, "system_powerdown", <-commands)

	m.Finish(nil)
	err := PressPowerButton(ctx, m)
	require.Error(t, err)
	assert.Equal(t, "press the power button of VM pwr: the VM has ended", err.Error())

	err = PressPowerButton(ctx, notQEMU{})
	require.Error(t, err)
	assert.Equal(t, "press the power button: qemu.notQEMU is not a VM of the qemu backend", err.Error())
}

// notQEMU is a machine of another backend.
type notQEMU struct{ hv.Machine }
