package guestinit

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/qoslab/qoslab/internal/guestchan"
)

// agentStopWait bounds how long init waits for the agent process to stop
// after passing it a stop signal.
const agentStopWait = 10 * time.Second

// Applies reports whether the agent binary, started as process pid with
// args (without the program name), is the guest's init or its agent process,
// and so must run Main rather than its usual flags.
func Applies(pid int, args []string) bool {
	return applies(pid, args, func() bool {
		_, err := os.Stat(guestchan.ConfigPath)
		return err == nil
	})
}

// Main runs the guest side of qoslab: as PID 1 it brings the guest up, starts
// the agent process, reaps orphans and powers off when the agent ends, and
// never returns; as the agent process (args[0] == agentArg) it serves the
// controller on the configured channels and returns the exit status once
// told to shut down.
func Main(args []string) int {
	if len(args) > 0 && args[0] == agentArg {
		return runAgent(args[1:])
	}
	runInit()
	return 1 // not reached: runInit powers off
}

// runInit is PID 1. It never returns: every way out powers the machine off.
func runInit() {
	began := bootClock()
	var sw stopwatch
	// No console is attached yet: lines wait for one (see bootLog).
	log := &bootLog{}
	defer func() {
		if r := recover(); r != nil {
			powerOff(log, fmt.Errorf("init panicked: %v\n%s", r, debug.Stack()))
		}
	}()
	// Handled, never left to the Go runtime, whose default for these is to
	// exit, which for PID 1 panics the kernel. Notify rather than Ignore:
	// an ignored signal would stay ignored in the agent process after exec.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, unix.SIGINT, unix.SIGTERM, unix.SIGPWR, unix.SIGHUP, unix.SIGQUIT, unix.SIGUSR1, unix.SIGUSR2)

	cfg, cfgErr := ReadConfig(guestchan.ConfigPath)
	mountErr := sw.time("mounts", func() ([]bootStep, error) {
		return nil, mountAll(systemMounts(cfg.ScratchDir))
	})
	_ = unlimitKernelLog()
	log.useKernelLog()
	// The kernel's console, when its driver is built in (a UART). On
	// Virtualization.framework it is the virtio console, whose driver is
	// a module: then the kernel could not open it for /init either, the
	// Go runtime put /dev/null on fds 0-2, and the console is attached
	// once the modules have loaded.
	consoleErr := attachConsole()
	if consoleErr == nil {
		log.attach(os.Stdout)
	}
	if err := errors.Join(cfgErr, mountErr); err != nil {
		powerOff(log, err)
	}
	// From the kernel's exec of /init to here: the Go runtime and package
	// initialisation, slow under TCG, which translates all that code first.
	if ran, ok := initRunTime(); ok && ran <= began {
		sw.steps = append([]bootStep{{Name: "go start", Took: began - ran}}, sw.steps...)
		began = ran
	}
	// Ctrl-Alt-Del then sends SIGINT, a clean stop, rather than resetting.
	_ = unix.Reboot(unix.LINUX_REBOOT_CMD_CAD_OFF)

	modErr := sw.time("modules", func() ([]bootStep, error) { return loadModules(cfg.Modules) })
	if consoleErr != nil {
		attachLateConsole(log, &sw)
	}
	if modErr != nil {
		powerOff(log, modErr)
	}

	pressed := watchPower(log)
	times := bootTimes{InitStart: began, Steps: sw.steps, Spawned: bootClock()}
	agentPid, err := syscall.ForkExec("/proc/self/exe", []string{os.Args[0], agentArg, times.encode()}, &syscall.ProcAttr{ //nolint:gosec // G204: this executable, re-run as the agent process
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
	})
	if err != nil {
		powerOff(log, fmt.Errorf("start the agent process: %w", err))
	}
	superviseAgent(log, agentPid, sigs, pressed)
}

// attachLateConsole waits (timed, as the step "console") for a console
// whose driver is a module, and attaches the boot log to it.
func attachLateConsole(log *bootLog, sw *stopwatch) {
	var dev string
	err := sw.time("console", func() ([]bootStep, error) {
		var err error
		dev, err = waitConsole(consoleWait)
		return nil, err
	})
	if err != nil {
		log.errorf("%v", err)
		return
	}
	log.attach(os.Stdout)
	log.notef("console %s, attached once the modules had loaded", dev)
}

// watchPower watches the power buttons there are and says which in the
// boot log; a press arrives on the channel it returns.
func watchPower(log *bootLog) <-chan powerButton {
	pressed := make(chan powerButton, 1)
	buttons, err := systemInputs().PowerButtons()
	if err == nil {
		buttons, err = watchPowerButtons(buttons, pressed)
	}
	if err != nil {
		log.errorf("%v", err)
	}
	if len(buttons) == 0 {
		log.notef("no power button: the host stops this guest through the agent, or by force")
		return pressed
	}
	var names []string
	for _, b := range buttons {
		names = append(names, b.String())
	}
	log.notef("power button: %s", strings.Join(names, ", "))
	return pressed
}

// superviseAgent reaps every process init inherits until the agent process
// ends, then powers off. Only init's own child, the agent process, and
// orphans are init's children, so a blind wait4(-1) steals no one's status.
// The power button (pressed) stops the agent as SIGTERM does, so that a
// host's request to stop (Virtualization.framework's requestStop, QEMU's
// system_powerdown) powers the guest off.
func superviseAgent(log *bootLog, agentPid int, sigs <-chan os.Signal, pressed <-chan powerButton) {
	agentEnded := make(chan syscall.WaitStatus, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				powerOff(log, fmt.Errorf("init's reaper panicked: %v\n%s", r, debug.Stack()))
			}
		}()
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, 0, nil)
			switch {
			case errors.Is(err, syscall.EINTR):
			case err != nil:
				// ECHILD would mean the agent process was reaped elsewhere;
				// nothing is left to wait for.
				powerOff(log, fmt.Errorf("wait for the agent process: %w", err))
			case pid == agentPid:
				agentEnded <- ws
				return
			}
		}
	}()
	var stopDeadline <-chan time.Time
	stopAgent := func() {
		_ = syscall.Kill(agentPid, syscall.SIGTERM)
		if stopDeadline == nil {
			stopDeadline = time.After(agentStopWait)
		}
	}
	for {
		select {
		case ws := <-agentEnded:
			if ws.Exited() && ws.ExitStatus() == 0 {
				powerOff(log, nil)
			}
			powerOff(log, fmt.Errorf("agent process %s", describeExit(ws)))
		case sig := <-sigs:
			switch sig {
			case unix.SIGINT, unix.SIGTERM, unix.SIGPWR:
				log.notef("%v: stopping the agent", sig)
				stopAgent()
			default:
				log.notef("%v ignored", sig)
			}
		case b := <-pressed:
			log.notef("power button %s pressed: stopping the agent, then powering off", b)
			stopAgent()
		case <-stopDeadline:
			powerOff(log, fmt.Errorf("agent process did not stop within %s", agentStopWait))
		}
	}
}
