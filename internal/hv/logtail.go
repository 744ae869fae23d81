package hv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// logTailLines is how many lines LogTail gives: enough for a hypervisor's
// last words, short enough for an error message.
const logTailLines = 3

// LogTail is the last three non-empty lines of a log file (a hypervisor's,
// a daemon's), joined with " | " for an error message, or in parentheses
// why there are none.
func LogTail(path string) string {
	b, err := os.ReadFile(path) //nolint:gosec // G304: a log in the VM's state directory, which the backend names
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("(no %s)", path)
	}
	if err != nil {
		return fmt.Sprintf("(%s: %v)", path, err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return fmt.Sprintf("(%s is empty)", path)
	}
	if len(lines) > logTailLines {
		lines = lines[len(lines)-logTailLines:]
	}
	return strings.Join(lines, " | ")
}
