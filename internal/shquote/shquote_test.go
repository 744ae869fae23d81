package shquote

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var words = []struct{ in, want string }{
	{"/home/me/.cache/qoslab/kernels", "/home/me/.cache/qoslab/kernels"},
	{"bin/qoslab", "bin/qoslab"},
	{"user@host:2222,a+b=c", "user@host:2222,a+b=c"},
	{"", "''"},
	{"a b", "'a b'"},
	{"it's", `'it'\''s'`},
	{"''", `''\'''\'''`},
	{"$HOME", "'$HOME'"},
	{"~/x", "'~/x'"},
	{"a*", "'a*'"},
	{"=ls", "'=ls'"}, // zsh would expand it to ls's path
	{"é", "'é'"},
	{"set -e\ninstall -d /x\nrm -rf \"$d\"", "'set -e\ninstall -d /x\nrm -rf \"$d\"'"},
	{"`id`;|&<>(){}[]!#\\?", "'`id`;|&<>(){}[]!#\\?'"},
}

func TestQuote(t *testing.T) {
	for _, w := range words {
		assert.Equal(t, w.want, Quote(w.in), "%q", w.in)
	}
}

// Every quoted word reaches a program as it was, through sh, and through
// zsh where it is installed.
func TestQuoteThroughTheShell(t *testing.T) {
	shells := []string{"sh"}
	if _, err := exec.LookPath("zsh"); err == nil {
		shells = append(shells, "zsh")
	}
	for _, sh := range shells {
		for _, w := range words {
			out, err := exec.Command(sh, "-c", "printf %s "+Quote(w.in)).Output()
			require.NoError(t, err, "%s: %q", sh, w.in)
			assert.Equal(t, w.in, string(out), "%s: %q", sh, w.in)
		}
	}
}
