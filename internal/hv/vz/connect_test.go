package vz

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blockingDial is vz's Connect as the connector sees it: a call that
// returns only when the test releases it, counting the calls in flight.
type blockingDial struct {
	release chan dialResult

	mu          sync.Mutex
	started     int
	inFlight    int
	maxInFlight int
	ports       []uint32
}

type dialResult struct {
	conn net.Conn
	err  error
}

func newBlockingDial() *blockingDial { return &blockingDial{release: make(chan dialResult)} }

func (d *blockingDial) dial(port uint32) (net.Conn, error) {
	d.mu.Lock()
	d.started++
	d.inFlight++
	d.maxInFlight = max(d.maxInFlight, d.inFlight)
	d.ports = append(d.ports, port)
	d.mu.Unlock()
	r := <-d.release
	d.mu.Lock()
	d.inFlight--
	d.mu.Unlock()
	return r.conn, r.err
}

func (d *blockingDial) counts() (started, inFlight, maxInFlight int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.started, d.inFlight, d.maxInFlight
}

// eventually waits (bounded) until cond holds.
func eventually(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still not so after %s: %s", waitBound, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitingOn is how many Connect calls wait on the attempt in flight.
func (c *connector) waitingOn() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == nil {
		return 0
	}
	return c.cur.waiting
}

func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// A guest that does not answer costs one attempt in flight however long it
// is waited for, where it cost one per retry.
func TestConnectorKeepsOneAttemptInFlight(t *testing.T) {
	d := newBlockingDial()
	c := newConnector(d.dial)

	for range 100 {
		_, err := c.Connect(cancelled(), 1024)
		require.ErrorIs(t, err, context.Canceled)
	}
	// The retry loop as the host runs it, with every attempt given up.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	_, err := connectRetryEvery(ctx, time.Millisecond, 0, func(ctx context.Context) (net.Conn, error) { return c.Connect(ctx, 1024) })
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	started, inFlight, most := d.counts()
	assert.Equal(t, 1, started, "one attempt made")
	assert.Equal(t, 1, inFlight)
	assert.Equal(t, 1, most, "never two in flight")

	// The guest answers at last, with nobody waiting: the connection is
	// closed, not leaked.
	mine, theirs := net.Pipe()
	d.release <- dialResult{conn: mine}
	require.NoError(t, theirs.SetReadDeadline(time.Now().Add(waitBound)))
	_, err = theirs.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "the late connection is closed")

	// The next Connect makes a new attempt and gets its connection.
	got := make(chan net.Conn, 1)
	go func() {
		conn, _ := c.Connect(context.Background(), 1024)
		got <- conn
	}()
	eventually(t, func() bool { s, _, _ := d.counts(); return s == 2 }, "a second attempt")
	second, _ := net.Pipe()
	d.release <- dialResult{conn: second}
	assert.Same(t, second, <-got)
	_, inFlight, most = d.counts()
	assert.Equal(t, 0, inFlight)
	assert.Equal(t, 1, most)
}

func TestConnectorSharesAnAttempt(t *testing.T) {
	d := newBlockingDial()
	c := newConnector(d.dial)
	type result struct {
		conn net.Conn
		err  error
	}
	results := make(chan result, 2)
	for range 2 {
		go func() {
			conn, err := c.Connect(context.Background(), 1024)
			results <- result{conn, err}
		}()
	}
	eventually(t, func() bool { return c.waitingOn() == 2 }, "two Connects waiting on one attempt")

	// One connection serves one caller; the other makes the next attempt.
	first, _ := net.Pipe()
	d.release <- dialResult{conn: first}
	r := <-results
	require.NoError(t, r.err)
	assert.Same(t, first, r.conn)
	second, _ := net.Pipe()
	d.release <- dialResult{conn: second}
	r = <-results
	require.NoError(t, r.err)
	assert.Same(t, second, r.conn)
	started, _, most := d.counts()
	assert.Equal(t, 2, started)
	assert.Equal(t, 1, most)

	// An error is every waiter's.
	for range 2 {
		go func() {
			conn, err := c.Connect(context.Background(), 1024)
			results <- result{conn, err}
		}()
	}
	eventually(t, func() bool { return c.waitingOn() == 2 }, "two Connects waiting")
	d.release <- dialResult{err: errors.New("connection reset by peer")}
	for range 2 {
		r := <-results
		assert.EqualError(t, r.err, "connection reset by peer")
		assert.Nil(t, r.conn)
	}
	started, _, _ = d.counts()
	assert.Equal(t, 3, started)
}

func TestConnectorWaitsForAnotherPortsAttempt(t *testing.T) {
	d := newBlockingDial()
	c := newConnector(d.dial)
	_, err := c.Connect(cancelled(), 1)
	require.ErrorIs(t, err, context.Canceled) // port 1's attempt stays in flight
	got := make(chan net.Conn, 1)
	go func() {
		conn, _ := c.Connect(context.Background(), 2)
		got <- conn
	}()
	eventually(t, func() bool { return c.waitingOn() == 1 }, "port 2 waiting for port 1's attempt")
	stale, theirs := net.Pipe()
	d.release <- dialResult{conn: stale}
	_, err = theirs.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "nobody wanted port 1's connection")
	fresh, _ := net.Pipe()
	d.release <- dialResult{conn: fresh}
	assert.Same(t, fresh, <-got)
	d.mu.Lock()
	assert.Equal(t, []uint32{1, 2}, d.ports)
	d.mu.Unlock()
}

func TestConnectWhile(t *testing.T) {
	d := newBlockingDial()
	c := newConnector(d.dial)
	stopped := make(chan struct{})
	errs := make(chan error, 1)
	go func() {
		_, err := c.connectWhile(context.Background(), stopped, 1024)
		errs <- err
	}()
	eventually(t, func() bool { return c.waitingOn() == 1 }, "a Connect waiting")
	close(stopped)
	assert.EqualError(t, <-errs, "the VM has stopped")

	go func() {
		_, err := c.connectWhile(context.Background(), make(chan struct{}), 1024)
		errs <- err
	}()
	eventually(t, func() bool { return c.waitingOn() == 1 }, "a Connect waiting")
	d.release <- dialResult{err: errors.New("connection reset by peer")}
	assert.EqualError(t, <-errs, "vsock port 1024: connection reset by peer")

	_, err := c.connectWhile(cancelled(), make(chan struct{}), 1024)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestConnectRetry(t *testing.T) {
	var attempts atomic.Int32
	c, err := connectRetryEvery(context.Background(), waitBound, 0, func(ctx context.Context) (net.Conn, error) {
		if attempts.Add(1) <= 3 {
			return nil, errors.New("connection reset by peer")
		}
		a, _ := net.Pipe()
		return a, nil
	})
	require.NoError(t, err)
	assert.NotNil(t, c)
	assert.Equal(t, int32(4), attempts.Load())

	// An attempt that gets no answer is given up and made again.
	attempts.Store(0)
	c, err = connectRetryEvery(context.Background(), time.Millisecond, 0, func(ctx context.Context) (net.Conn, error) {
		if attempts.Add(1) == 1 {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		a, _ := net.Pipe()
		return a, nil
	})
	require.NoError(t, err)
	assert.NotNil(t, c)
	assert.Equal(t, int32(2), attempts.Load())

	_, err = connectRetry(cancelled(), func(ctx context.Context) (net.Conn, error) {
		return nil, errors.New("connection reset by peer")
	})
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "last attempt: connection reset by peer")
}

// vzSocketConn has exactly the methods of vz v3.7.1's
// *VirtioSocketConnection (TestVZSocketConnIsVZs checks them against vz's
// source): a net.Conn over a unix socket it keeps to itself, so no
// CloseWrite. closed is closed by the first Close.
type vzSocketConn struct {
	raw    net.Conn
	port   uint32 // the guest's
	once   sync.Once
	closed chan struct{}
}

func newVZSocketConn(raw net.Conn, port uint32) *vzSocketConn {
	return &vzSocketConn{raw: raw, port: port, closed: make(chan struct{})}
}

func (v *vzSocketConn) Read(b []byte) (int, error)  { return v.raw.Read(b) }
func (v *vzSocketConn) Write(b []byte) (int, error) { return v.raw.Write(b) }
func (v *vzSocketConn) Close() error {
	v.once.Do(func() { close(v.closed) })
	return v.raw.Close()
}
func (v *vzSocketConn) LocalAddr() net.Addr                { return v.raw.LocalAddr() }
func (v *vzSocketConn) RemoteAddr() net.Addr               { return v.raw.RemoteAddr() }
func (v *vzSocketConn) SetDeadline(t time.Time) error      { return v.raw.SetDeadline(t) }
func (v *vzSocketConn) SetReadDeadline(t time.Time) error  { return v.raw.SetReadDeadline(t) }
func (v *vzSocketConn) SetWriteDeadline(t time.Time) error { return v.raw.SetWriteDeadline(t) }
func (v *vzSocketConn) DestinationPort() uint32            { return v.port }
func (v *vzSocketConn) SourcePort() uint32                 { return 3000 }

// The double is only as good as its likeness: its exported methods are
// those vz's source declares on VirtioSocketConnection.
func TestVZSocketConnIsVZs(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-json", "github.com/Code-Hex/vz/v3").Output()
	require.NoError(t, err)
	var mod struct{ Version, Dir string }
	require.NoError(t, json.Unmarshal(out, &mod))
	require.Equal(t, "v3.7.1", mod.Version, "the version this double was written from")
	require.NotEmpty(t, mod.Dir, "vz's source is not in the module cache: run `go mod download`")

	files, err := filepath.Glob(filepath.Join(mod.Dir, "*.go"))
	require.NoError(t, err)
	fset := token.NewFileSet()
	var vzMethods []string
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !fn.Name.IsExported() {
				continue
			}
			recv := fn.Recv.List[0].Type
			if star, ok := recv.(*ast.StarExpr); ok {
				recv = star.X
			}
			if id, ok := recv.(*ast.Ident); ok && id.Name == "VirtioSocketConnection" {
				vzMethods = append(vzMethods, fn.Name.Name)
			}
		}
	}
	require.NotEmpty(t, vzMethods, "no VirtioSocketConnection in %s", mod.Dir)
	var ours []string
	typ := reflect.TypeOf(&vzSocketConn{})
	for i := range typ.NumMethod() {
		ours = append(ours, typ.Method(i).Name)
	}
	sort.Strings(vzMethods)
	assert.Equal(t, vzMethods, ours)
	assert.NotContains(t, vzMethods, "CloseWrite", "vz's connection cannot be half-closed")
	_, ok := any(&vzSocketConn{}).(closeWriter)
	assert.False(t, ok)
}

// proxied runs proxy between a new client and a new guest end, the guest
// end as vz hands it (or a plain unix socket), and returns the client, the
// agent's end and the proxy's end.
func proxied(t *testing.T, ctx context.Context, asVZ bool, linger time.Duration) (client, agent net.Conn, guestEnd net.Conn, done <-chan struct{}) {
	t.Helper()
	client, hostEnd := unixPair(t)
	guestEnd, agent = unixPair(t)
	if asVZ {
		guestEnd = newVZSocketConn(guestEnd, 1024)
	}
	finished := make(chan struct{})
	go func() {
		proxy(ctx, hostEnd, guestEnd, linger)
		close(finished)
	}()
	for _, c := range []net.Conn{client, agent} {
		require.NoError(t, c.SetDeadline(time.Now().Add(waitBound)))
	}
	return client, agent, guestEnd, finished
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitBound):
		t.Fatalf("%s did not happen", what)
	}
}

func TestProxyCopiesBothWays(t *testing.T) {
	for _, asVZ := range []bool{false, true} {
		client, agent, _, done := proxied(t, context.Background(), asVZ, waitBound)
		go func() { _, _ = io.Copy(agent, agent) }()
		echoes(t, client, "hello agent")
		echoes(t, client, "again")
		// The agent goes away: the client reads the end, and the proxy
		// ends once the client closes too.
		require.NoError(t, agent.Close())
		_, err := client.Read(make([]byte, 1))
		assert.ErrorIs(t, err, io.EOF)
		require.NoError(t, client.Close())
		waitClosed(t, done, "the proxy's end")
	}
}

// A client that half-closes after its request gets the answer, whether
// its end of stream can be passed on (a unix socket) or not (vz's
// connection, where the old proxy closed both ends instead).
func TestProxyHalfClose(t *testing.T) {
	for _, tc := range []struct {
		name string
		asVZ bool
	}{{"unix socket", false}, {"vz connection", true}} {
		t.Run(tc.name, func(t *testing.T) {
			client, agent, guestEnd, done := proxied(t, context.Background(), tc.asVZ, waitBound)
			go func() {
				req, err := bufio.NewReader(agent).ReadString('\n')
				if err != nil {
					return
				}
				if vzEnd, ok := guestEnd.(*vzSocketConn); ok {
					// Time for a proxy that reacts to the half-close by
					// closing the guest's end to do so: the answer below
					// would then be lost.
					select {
					case <-vzEnd.closed:
					case <-time.After(200 * time.Millisecond):
					}
				}
				_, _ = agent.Write([]byte("got " + req))
				_ = agent.Close()
			}()
			_, err := client.Write([]byte("request\n"))
			require.NoError(t, err)
			require.NoError(t, client.(*net.UnixConn).CloseWrite())
			answer, err := io.ReadAll(client)
			require.NoError(t, err)
			assert.Equal(t, "got request\n", string(answer))
			waitClosed(t, done, "the proxy's end")
		})
	}
}

// A client that closes entirely cannot be told from one that half-closed
// when the guest's end is vz's: the guest's end is closed after the linger.
func TestProxyLingersThenCloses(t *testing.T) {
	client, _, guestEnd, done := proxied(t, context.Background(), true, 10*time.Millisecond)
	require.NoError(t, client.Close())
	waitClosed(t, guestEnd.(*vzSocketConn).closed, "closing the guest's end")
	waitClosed(t, done, "the proxy's end")
}

func TestProxyEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	client, agent, _, done := proxied(t, ctx, true, waitBound)
	cancel()
	waitClosed(t, done, "the proxy's end with its context")
	_, err := client.Read(make([]byte, 1))
	assert.Error(t, err)
	_, err = agent.Read(make([]byte, 1))
	assert.Error(t, err)
}
