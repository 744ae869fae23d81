package qemu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"sync"
	"time"
)

// qmpClient speaks the QEMU Machine Protocol: JSON objects over a unix
// socket. Commands carry an id and their replies are matched by it, so
// asynchronous events arriving in between are recorded, never mistaken for
// a reply. One goroutine reads; any number may execute.
//
// No maintained Go QMP library is worth a dependency for the three
// commands used here: digitalocean/go-qemu's qmp package works but brings
// a generated API for all of QEMU, and its monitor delivers events through
// a channel that must be drained.
type qmpClient struct {
	conn net.Conn
	// version is QEMU's, from the greeting.
	version qmpVersion

	writeMu sync.Mutex

	mu      sync.Mutex
	nextID  uint64
	pending map[string]chan qmpMessage
	events  []qmpEvent
	readErr error
	// readDone is closed when the reader has stopped: the connection
	// closed, QEMU exited, or a reply could not be parsed.
	readDone chan struct{}
}

// qmpEventsKept bounds the events remembered; only the last SHUTDOWN
// matters, and a long-running VM may emit many others.
const qmpEventsKept = 64

// qmpMessage is any object QEMU sends: a greeting, a reply or an event.
type qmpMessage struct {
	Greeting *struct {
		Version struct {
			QEMU qmpVersion `json:"qemu"`
		} `json:"version"`
	} `json:"QMP,omitempty"`
	ID        json.RawMessage `json:"id,omitempty"`
	Return    json.RawMessage `json:"return,omitempty"`
	Error     *qmpError       `json:"error,omitempty"`
	Event     string          `json:"event,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	Timestamp struct {
		Seconds      int64 `json:"seconds"`
		Microseconds int64 `json:"microseconds"`
	} `json:"timestamp"`
}

type qmpVersion struct {
	Major int `json:"major"`
	Minor int `json:"minor"`
	Micro int `json:"micro"`
}

func (v qmpVersion) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Micro) }

// qmpError is an error reply from QEMU to a QMP command.
type qmpError struct {
	Command string `json:"-"`
	Class   string `json:"class"` // GenericError, CommandNotFound, DeviceNotActive, ...
	Desc    string `json:"desc"`
}

func (e *qmpError) Error() string {
	return fmt.Sprintf("QMP %s: %s: %s", e.Command, e.Class, e.Desc)
}

// qmpEvent is an asynchronous event QEMU sent.
type qmpEvent struct {
	Name string
	Data json.RawMessage
	At   time.Time
}

// errQMPClosed is what commands fail with once the connection is gone.
var errQMPClosed = errors.New("QMP connection closed")

// dialQMP connects to QEMU's QMP socket, reads the greeting and leaves
// capabilities negotiation, so commands can be executed. ctx bounds the
// whole handshake: QEMU serves one QMP client at a time, and a second one
// connects but is never greeted.
func dialQMP(ctx context.Context, path string) (*qmpClient, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("QMP %s: %w", path, err)
	}
	c, err := newQMPClient(ctx, conn)
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("QMP %s: %w", path, err)
	}
	return c, nil
}

func newQMPClient(ctx context.Context, conn net.Conn) (*qmpClient, error) {
	c := &qmpClient{conn: conn, pending: map[string]chan qmpMessage{}, readDone: make(chan struct{})}
	dec := json.NewDecoder(conn)

	// The greeting is read before the reader starts; closing the connection
	// is what interrupts the read when ctx ends.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetReadDeadline(time.Unix(1, 0)) })
	var greeting qmpMessage
	err := dec.Decode(&greeting)
	if !stop() {
		return nil, fmt.Errorf("no greeting (is another client connected? QEMU serves one at a time): %w", ctx.Err())
	}
	if err != nil {
		return nil, fmt.Errorf("read greeting: %w", err)
	}
	if greeting.Greeting == nil {
		return nil, errors.New("the first message is not a QMP greeting")
	}
	c.version = greeting.Greeting.Version.QEMU

	go c.read(dec)
	if err := c.execute(ctx, "qmp_capabilities", nil, nil); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// read delivers replies to the commands waiting for them and records
// events, until the connection ends.
func (c *qmpClient) read(dec *json.Decoder) {
	var err error
	for {
		var m qmpMessage
		if err = dec.Decode(&m); err != nil {
			break
		}
		c.mu.Lock()
		switch {
		case m.Event != "":
			c.events = append(c.events, qmpEvent{
				Name: m.Event,
				Data: m.Data,
				At:   time.Unix(m.Timestamp.Seconds, m.Timestamp.Microseconds*1000),
			})
			if len(c.events) > qmpEventsKept {
				c.events = c.events[len(c.events)-qmpEventsKept:]
			}
		case m.ID != nil:
			var id string
			if json.Unmarshal(m.ID, &id) == nil {
				if ch, ok := c.pending[id]; ok {
					delete(c.pending, id)
					ch <- m
				}
			}
		}
		// A reply without an id answers a line QEMU could not parse; every
		// command sent here has one, so there is nobody to give it to.
		c.mu.Unlock()
	}
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		err = errQMPClosed
	}
	c.mu.Lock()
	c.readErr = err
	c.mu.Unlock()
	close(c.readDone)
}

// execute runs a command with arguments (nil for none) and decodes its
// return value into result (nil to ignore it).
func (c *qmpClient) execute(ctx context.Context, command string, arguments, result any) error {
	c.mu.Lock()
	if c.readErr != nil {
		err := c.readErr
		c.mu.Unlock()
		return fmt.Errorf("QMP %s: %w", command, err)
	}
	c.nextID++
	id := "qoslab-" + strconv.FormatUint(c.nextID, 10)
	reply := make(chan qmpMessage, 1)
	c.pending[id] = reply
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}

	req := struct {
		Execute   string `json:"execute"`
		Arguments any    `json:"arguments,omitempty"`
		ID        string `json:"id"`
	}{command, arguments, id}
	line, err := json.Marshal(req)
	if err != nil {
		forget()
		return fmt.Errorf("QMP %s: %w", command, err)
	}
	c.writeMu.Lock()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.conn.SetWriteDeadline(dl)
	}
	_, err = c.conn.Write(append(line, '\n'))
	_ = c.conn.SetWriteDeadline(time.Time{})
	c.writeMu.Unlock()
	if err != nil {
		forget()
		return fmt.Errorf("QMP %s: %w", command, err)
	}

	select {
	case m := <-reply:
		if m.Error != nil {
			e := *m.Error
			e.Command = command
			return &e
		}
		if result != nil {
			if err := json.Unmarshal(m.Return, result); err != nil {
				return fmt.Errorf("QMP %s: decode the reply %s: %w", command, m.Return, err)
			}
		}
		return nil
	case <-c.readDone:
		forget()
		c.mu.Lock()
		err := c.readErr
		c.mu.Unlock()
		return fmt.Errorf("QMP %s: %w", command, err)
	case <-ctx.Done():
		forget()
		return fmt.Errorf("QMP %s: %w", command, ctx.Err())
	}
}

// qmpCPU is one vCPU as query-cpus-fast describes it.
type qmpCPU struct {
	Index    int    `json:"cpu-index"`
	ThreadID int    `json:"thread-id"`
	QOMPath  string `json:"qom-path"`
	Target   string `json:"target"`
}

// vcpuThreads returns the host thread id of each vCPU, by vCPU index.
func (c *qmpClient) vcpuThreads(ctx context.Context) ([]int, error) {
	var cpus []qmpCPU
	if err := c.execute(ctx, "query-cpus-fast", nil, &cpus); err != nil {
		return nil, err
	}
	sort.Slice(cpus, func(i, j int) bool { return cpus[i].Index < cpus[j].Index })
	threads := make([]int, len(cpus))
	for i, cpu := range cpus {
		threads[i] = cpu.ThreadID
	}
	return threads, nil
}

// qmpStatus is query-status's reply.
type qmpStatus struct {
	Running bool   `json:"running"`
	Status  string `json:"status"` // running, paused, prelaunch, shutdown, ...
}

func (c *qmpClient) status(ctx context.Context) (qmpStatus, error) {
	var s qmpStatus
	err := c.execute(ctx, "query-status", nil, &s)
	return s, err
}

// quit asks QEMU to exit at once. QEMU may close the connection before its
// reply arrives; that is success too.
func (c *qmpClient) quit(ctx context.Context) error {
	err := c.execute(ctx, "quit", nil, nil)
	if errors.Is(err, errQMPClosed) {
		return nil
	}
	return err
}

// shutdownReason is the reason QEMU gave in its last SHUTDOWN event
// (guest-shutdown, guest-reset, guest-panic, host-qmp-quit, host-signal,
// ...), or "" if there was none.
func (c *qmpClient) shutdownReason() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.events) - 1; i >= 0; i-- {
		if c.events[i].Name != "SHUTDOWN" {
			continue
		}
		var data struct {
			Reason string `json:"reason"`
		}
		_ = json.Unmarshal(c.events[i].Data, &data)
		return data.Reason
	}
	return ""
}

// recordedEvents returns a copy of the events received so far.
func (c *qmpClient) recordedEvents() []qmpEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]qmpEvent(nil), c.events...)
}

// Close closes the connection and waits for the reader to stop.
func (c *qmpClient) Close() error {
	err := c.conn.Close()
	<-c.readDone
	return err
}
