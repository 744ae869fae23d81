// Package posixcheck holds the test that keeps the shell scripts runnable
// where a Mac user runs them: macOS has bash 3.2 and BSD tools, so GNU-only
// forms (sed -i without a suffix, stat -c, readlink -f, date -d, grep -P)
// fail there although they pass on Linux.
package posixcheck

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scripts returns every shell script in scripts/ (a file whose first line
// is a sh or bash shebang).
func scripts(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("..")
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		p := filepath.Join("..", e.Name())
		f, err := os.Open(p)
		require.NoError(t, err)
		first, _ := bufio.NewReader(f).ReadString('\n')
		f.Close()
		if strings.HasPrefix(first, "#!") && (strings.Contains(first, "bash") || strings.Contains(first, "/sh")) {
			out = append(out, p)
		}
	}
	require.NotEmpty(t, out)
	return out
}

// gnuOnly are forms BSD tools on macOS reject or read otherwise.
var gnuOnly = []struct {
	re   *regexp.Regexp
	what string
}{
	// sed -i takes a suffix on BSD: "sed -i '' ..." or "sed -i.bak ...".
	{regexp.MustCompile(`\bsed\s+(-[a-zA-Z]+\s+)*-[a-zA-Z]*i(\s+([^'"\s]|'[^']|"[^"])|\s*$)`), "sed -i without a suffix (BSD sed takes the next word as one)"},
	{regexp.MustCompile(`\bstat\s+(-[a-zA-Z]+\s+)*-c\b`), "stat -c (BSD stat uses -f)"},
	{regexp.MustCompile(`\breadlink\s+-f\b`), "readlink -f (not on older macOS)"},
	{regexp.MustCompile(`\bdate\s+(-[a-zA-Z]+\s+)*-d\b`), "date -d (BSD date uses -j -f)"},
	{regexp.MustCompile(`\bgrep\s+(-[a-zA-Z]+\s+)*-[a-zA-Z]*P`), "grep -P (BSD grep has no Perl regexps)"},
}

func TestScriptsUseNoGNUOnlyForms(t *testing.T) {
	for _, p := range scripts(t) {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		for i, line := range strings.Split(string(b), "\n") {
			code := strings.TrimSpace(line)
			if strings.HasPrefix(code, "#") {
				continue
			}
			for _, g := range gnuOnly {
				assert.False(t, g.re.MatchString(code), "%s:%d: %s: %s", p, i+1, g.what, code)
			}
		}
	}
}

// The patterns catch what they are for, and let the portable forms by.
func TestGNUOnlyPatterns(t *testing.T) {
	bad := []string{`sed -i 's/a/b/' f`, `sed -n -i "s/a/b/" f`, `stat -c %s f`, `readlink -f x`, `date -d @1 +%s`, `grep -P '\d' f`, `sed -i`}
	good := []string{`sed -i '' 's/a/b/' f`, `sed -i.bak 's/a/b/' f`, `stat -f %z f`, `date -u +%Y`, `grep -E 'a|b' f`, `sed -n 's/a/b/p' f`}
	match := func(s string) bool {
		for _, g := range gnuOnly {
			if g.re.MatchString(s) {
				return true
			}
		}
		return false
	}
	for _, s := range bad {
		assert.True(t, match(s), s)
	}
	for _, s := range good {
		assert.False(t, match(s), s)
	}
}

// shellcheck (Debian's package; make test-deps installs it) finds what bash 3.2
// and sh would trip on. CI must have it; elsewhere its absence skips.
func TestScriptsPassShellcheck(t *testing.T) {
	if _, err := exec.LookPath("shellcheck"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI runs shellcheck on the scripts: install it (make test-deps does)")
		}
		t.Skip("no shellcheck")
	}
	for _, p := range scripts(t) {
		var out bytes.Buffer
		cmd := exec.Command("shellcheck", "-S", "warning", p)
		cmd.Stdout, cmd.Stderr = &out, &out
		assert.NoError(t, cmd.Run(), "%s:\n%s", p, out.String())
	}
}
