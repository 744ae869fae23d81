// Command qoslab-agent measures qoslab's workloads on the machine it runs on:
// the host (started by the controller over stdio) or a VM guest.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/guestinit"
	"github.com/qoslab/qoslab/internal/tmpdir"
	"github.com/qoslab/qoslab/internal/transport"
	"github.com/qoslab/qoslab/internal/version"
	"github.com/qoslab/qoslab/internal/workload"
)

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	if len(os.Args) > 1 && os.Args[1] == workload.WorkerArg {
		os.Exit(workload.WorkerMain(os.Args[2:], os.Stdout))
	}
	// PID 1 of a qoslab guest, or the agent process that init starts.
	if guestinit.Applies(os.Getpid(), os.Args[1:]) {
		os.Exit(guestinit.Main(os.Args[1:]))
	}
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("qoslab-agent", flag.ContinueOnError)
	listen := fs.String("listen", "stdio", "where to serve: "+transport.AddrForms)
	scratch := fs.String("scratch", "", "the only directory file sinks may write in (created if missing); empty: a new temporary directory")
	var blocks stringList
	fs.Var(&blocks, "allow-block", "a raw block device the block sink may overwrite (repeatable)")
	tokenFile := fs.String("token-file", "", "tcp: the file holding the token clients must present (created, mode 0600, if missing; default $XDG_RUNTIME_DIR/qoslab-agent.token or ~/.config/qoslab/agent.token)")
	noToken := fs.Bool("insecure-no-token", false, "tcp: take requests from anyone who can reach the port (unsafe: anyone on the machine or network can run or stop cells)")
	powerOff := fs.Bool(agent.PowerOffFlag, false, "after answering a Shutdown request, power the machine off with '"+strings.Join(agent.PowerOffCommand(), " ")+
		"' (a macOS guest's LaunchDaemon; needs root, ignored outside a virtual machine)")
	showVersion := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *showVersion {
		fmt.Printf("qoslab-agent %s (protocol %d.%d)\n", version.String(), version.ProtocolMajor, version.ProtocolMinor)
		return 0
	}
	// stdout may be the protocol channel: logs go to stderr only.
	logger := log.New(os.Stderr, "qoslab-agent: ", log.LstdFlags)

	addr, err := transport.Parse(*listen)
	if err != nil {
		logger.Print(err)
		return 2
	}
	dir, temporary, err := scratchDir(logger, *scratch)
	if err != nil {
		logger.Print(err)
		return 1
	}
	if temporary {
		defer os.RemoveAll(dir)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	lis, err := transport.Listen(ctx, addr)
	if err != nil {
		logger.Print(err)
		return 1
	}

	policy := agent.Policy{ScratchDir: dir, BlockDevices: blocks}
	if addr.Kind == transport.KindTCP && !*noToken {
		if err := useToken(logger, &policy, *tokenFile); err != nil {
			logger.Print(err)
			return 1
		}
	} else if addr.Kind == transport.KindTCP {
		logger.Printf("tcp: --insecure-no-token: anyone who can reach %s can run and stop cells", lis.Addr())
	}
	var after func(context.Context) error
	if *powerOff {
		after = powerOffAfter(logger)
	}
	if addr.Kind != transport.KindStdio {
		logger.Printf("%s serving on %s", version.String(), lis.Addr())
	}
	if err := agent.Serve(ctx, policy, lis, after); err != nil {
		logger.Print(err)
		return 1
	}
	return 0
}

// scratchDir makes the directory file sinks may write in: dir, or when dir
// is empty a new temporary one (temporary), after sweeping away those of
// agents that no longer run.
func scratchDir(logger *log.Logger, dir string) (_ string, temporary bool, _ error) {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", false, fmt.Errorf("scratch directory %s: %w", dir, err)
		}
		return dir, false, nil
	}
	// Scratch directories of agents killed before they could clean up
	// (their controller killed with -9) go first.
	for _, d := range tmpdir.Sweep("qoslab-agent-") {
		logger.Printf("removed %s, left by an agent that no longer runs", d)
	}
	dir, err := tmpdir.Make("qoslab-agent-")
	if err != nil {
		return "", false, fmt.Errorf("scratch directory: %w", err)
	}
	return dir, true, nil
}

// useToken makes policy demand the token in path (by default the agent's
// token file), creating it if missing.
func useToken(logger *log.Logger, policy *agent.Policy, path string) error {
	if path == "" {
		var err error
		if path, err = agent.DefaultTokenFile(os.Getenv(agent.RuntimeDirEnv)); err != nil {
			return err
		}
	}
	token, err := agent.LoadOrCreateToken(path)
	if err != nil {
		return err
	}
	policy.Token, policy.TokenFile = token, path
	logger.Printf("tcp: clients must present the token in %s (or start with --insecure-no-token)", path)
	return nil
}

// powerOffAfter is what --power-off does after a Shutdown request: power
// the machine off, or, where it may not (not root, not a virtual machine),
// nothing, which it logs.
func powerOffAfter(logger *log.Logger) func(context.Context) error {
	virtual, how := agent.Virtualized()
	if err := agent.CheckPowerOff(runtime.GOOS, os.Geteuid(), virtual, how); err != nil {
		logger.Printf("--%s ignored: %v; a Shutdown request only stops the agent", agent.PowerOffFlag, err)
		return nil
	}
	return agent.PowerOff(runCommand)
}

// runCommand runs argv, its output going to the agent's log.
func runCommand(ctx context.Context, argv []string) error {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...) //nolint:gosec // G204: argv is agent.PowerOffCommand(), a fixed command
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}
