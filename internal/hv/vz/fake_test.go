package vz

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/qoslab/qoslab/internal/hv"
)

// Set in the environment of a test binary run as a vz host process: the
// binary then runs hostMain with fakeVM guests instead of the tests.
const (
	testHostEnv = "QOSLAB_VZ_TEST_HOST"
	// testHostRefuseEnv is how many agent connections the guest refuses
	// before its agent listens.
	testHostRefuseEnv = "QOSLAB_VZ_TEST_REFUSE"
	// testHostBootErrEnv makes booting fail with its value.
	testHostBootErrEnv = "QOSLAB_VZ_TEST_BOOT_ERROR"
)

func TestMain(m *testing.M) {
	if os.Getenv(testHostEnv) != "" {
		os.Exit(runTestHost())
	}
	os.Exit(m.Run())
}

// runTestHost is HostMain with fake guests, for the detached tests.
func runTestHost() int {
	signal.Ignore(syscall.SIGHUP)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	refuse := 0
	_, _ = fmt.Sscan(os.Getenv(testHostRefuseEnv), &refuse) // unset: 0, refuse none
	boot := func(ctx context.Context, p plan, logger *log.Logger) (instance, error) {
		if msg := os.Getenv(testHostBootErrEnv); msg != "" {
			return nil, errors.New(msg)
		}
		return newFakeVM(p.AgentPort, refuse), nil
	}
	if err := hostMain(ctx, os.Args[len(os.Args)-1], boot, fakeAgentStop, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// fakeVM is a guest whose agent echoes what it is sent, except the power-off
// request fakeAgentStop sends, which it answers and then powers the guest
// off.
type fakeVM struct {
	port uint32
	// refuse counts connections to refuse before the agent listens.
	refuse atomic.Int32
	// ignoreStop makes the guest ignore the power button; requestErr makes
	// pressing it fail.
	ignoreStop bool
	requestErr error
	// agentStays makes the agent answer a power-off request without
	// powering off (an agent provisioned before it could).
	agentStays bool
	requests   atomic.Int32
	forced     atomic.Int32
	// servicePID and serviceErr are what Service reports.
	servicePID int
	serviceErr error

	mu    sync.Mutex
	conns []net.Conn
	// events are what happened to the VM, in order: "connect", "agent
	// power-off", "power button", "forced stop".
	events []string
	err    error
	done   chan struct{}
	once   sync.Once
}

// powerOffRequest and powerOffAnswer are the fake agent's power-off
// exchange.
const (
	powerOffRequest = "power off\n"
	powerOffAnswer  = "ok\n"
)

// fakeAgentStop is an AgentStop for fakeVM's agent.
func fakeAgentStop(ctx context.Context, c net.Conn) error {
	defer c.Close()
	if d, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(d)
	}
	if _, err := io.WriteString(c, powerOffRequest); err != nil {
		return err
	}
	answer := make([]byte, len(powerOffAnswer))
	if _, err := io.ReadFull(c, answer); err != nil {
		return err
	}
	if string(answer) != powerOffAnswer {
		return fmt.Errorf("the agent answered %q", answer)
	}
	return nil
}

func (f *fakeVM) record(event string) {
	f.mu.Lock()
	f.events = append(f.events, event)
	f.mu.Unlock()
}

func (f *fakeVM) history() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.events...)
}

// serveAgent is the fake agent on one connection.
func (f *fakeVM) serveAgent(c net.Conn) {
	defer c.Close()
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		if string(buf[:n]) == powerOffRequest {
			f.record("agent power-off")
			_, _ = io.WriteString(c, powerOffAnswer)
			if !f.agentStays {
				f.end(nil)
			}
			continue
		}
		if _, err := c.Write(buf[:n]); err != nil {
			return
		}
	}
}

var _ instance = (*fakeVM)(nil)

func newFakeVM(port uint32, refuse int) *fakeVM {
	f := &fakeVM{port: port, done: make(chan struct{})}
	f.refuse.Store(int32(refuse))
	return f
}

func (f *fakeVM) Connect(ctx context.Context, port uint32) (net.Conn, error) {
	select {
	case <-f.done:
		return nil, errors.New("the VM has stopped")
	default:
	}
	if port != f.port {
		return nil, fmt.Errorf("connection refused: nothing on port %d", port)
	}
	if f.refuse.Add(-1) >= 0 {
		return nil, errors.New("connection reset by peer")
	}
	host, guest := net.Pipe()
	f.mu.Lock()
	f.conns = append(f.conns, host, guest)
	f.events = append(f.events, "connect")
	f.mu.Unlock()
	go f.serveAgent(guest)
	return host, nil
}

// end stops the fake VM for why.
func (f *fakeVM) end(why error) {
	f.once.Do(func() {
		f.mu.Lock()
		f.err = why
		for _, c := range f.conns {
			_ = c.Close()
		}
		f.mu.Unlock()
		close(f.done)
	})
}

func (f *fakeVM) Done() <-chan struct{} { return f.done }

func (f *fakeVM) Service() (int, error) { return f.servicePID, f.serviceErr }

func (f *fakeVM) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

func (f *fakeVM) RequestStop() error {
	f.requests.Add(1)
	f.record("power button")
	if f.requestErr != nil {
		return f.requestErr
	}
	if !f.ignoreStop {
		f.end(nil)
	}
	return nil
}

func (f *fakeVM) ForceStop(ctx context.Context) error {
	f.forced.Add(1)
	f.record("forced stop")
	f.end(nil)
	return nil
}

// fakePlatform boots fakeVMs and remembers them.
type fakePlatform struct {
	lim     Limits
	refuse  int
	bootErr error
	// servicePID and serviceErr are the booted VMs' service process.
	servicePID int
	serviceErr error
	mu         sync.Mutex
	booted     []*fakeVM
	plans      []plan
}

func (fp *fakePlatform) platform() platform {
	return platform{
		limits: func() (Limits, error) { return fp.lim, nil },
		boot: func(ctx context.Context, p plan, logger *log.Logger) (instance, error) {
			if fp.bootErr != nil {
				return nil, fp.bootErr
			}
			vm := newFakeVM(p.AgentPort, fp.refuse)
			vm.servicePID, vm.serviceErr = fp.servicePID, fp.serviceErr
			fp.mu.Lock()
			fp.booted = append(fp.booted, vm)
			fp.plans = append(fp.plans, p)
			fp.mu.Unlock()
			return vm, nil
		},
		check: func(context.Context) []hv.Check { return nil },
	}
}

func (fp *fakePlatform) vm(i int) *fakeVM {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	return fp.booted[i]
}

// discardLogger is a host's log in tests.
func discardLogger() *log.Logger { return log.New(io.Discard, "", 0) }
