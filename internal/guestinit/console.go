package guestinit

import (
	"fmt"
	"io"
	"strings"
	"sync"
)

// Kernel log levels (syslog's) the init writes its lines at.
const (
	levelErr    = 3
	levelNotice = 5
)

// logPrefix starts every line the init writes, so the console log can be grepped.
const logPrefix = "qoslab-agent: "

// maxHeldLines bounds the lines kept for a console that does not exist yet.
const maxHeldLines = 256

// bootLog writes the init's lines where the VM's console log shows them:
// into the kernel log (/dev/kmsg), which stamps them with the kernel's
// time and prints them on the console when their level is below the
// console log level, and straight to the console for the levels the kernel
// would not print there.
type bootLog struct {
	mu sync.Mutex
	// kmsg is /dev/kmsg; nil when it could not be opened.
	kmsg io.Writer
	// console is the process's stdout, which init points at the console;
	// nil while there is no console yet (Virtualization.framework's is the
	// virtio console, whose driver is a module): the lines the kernel
	// would not show are held until attach. (The kernel log's records are
	// not: a console prints the kernel log from its start when it
	// registers.)
	console io.Writer
	held    []string
	// consoleLevel is the kernel's console log level: a kernel log line of
	// a lower level reaches the console without our help.
	consoleLevel int
}

func (l *bootLog) notef(format string, args ...any)  { l.printf(levelNotice, format, args...) }
func (l *bootLog) errorf(format string, args ...any) { l.printf(levelErr, format, args...) }

func (l *bootLog) printf(level int, format string, args ...any) {
	msg := strings.TrimRight(fmt.Sprintf(format, args...), "\n")
	l.mu.Lock()
	defer l.mu.Unlock()
	echoed := false
	if l.kmsg != nil {
		// One write per record: /dev/kmsg takes each write as one line.
		for _, line := range strings.Split(msg, "\n") {
			if _, err := fmt.Fprintf(l.kmsg, "<%d>%s%s\n", level, logPrefix, line); err != nil {
				l.kmsg = nil
				break
			}
		}
		echoed = l.kmsg != nil && level < l.consoleLevel
	}
	if echoed {
		return
	}
	line := logPrefix + msg + "\n"
	if l.console == nil {
		if len(l.held) < maxHeldLines {
			l.held = append(l.held, line)
		}
		return
	}
	_, _ = io.WriteString(l.console, line)
}

// attach makes w the console, and writes there the lines held until now.
func (l *bootLog) attach(w io.Writer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.console = w
	for _, line := range l.held {
		_, _ = io.WriteString(w, line)
	}
	l.held = nil
}

// parseConsoleLevel reads the first field of /proc/sys/kernel/printk (the
// console log level); def when it cannot be read.
func parseConsoleLevel(printk string, def int) int {
	var level int
	if _, err := fmt.Sscan(printk, &level); err != nil {
		return def
	}
	return level
}
