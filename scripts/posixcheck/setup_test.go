package posixcheck

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeMac is a directory of stand-ins for what setup.sh asks a Mac (uname,
// sysctl, xcode-select, go), answering from FAKE_* variables; go only logs
// what it is asked to do to FAKE_LOG, and downloads nothing.
func fakeMac(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	tools := map[string]string{
		"uname": `case "$1" in -m) echo "$FAKE_UNAME_M" ;; *) echo Darwin ;; esac`,
		// An Intel Mac has no hw.optional.arm64: sysctl fails, as macOS's does.
		"sysctl":       `if [ "$1 $2" = "-n hw.optional.arm64" ] && [ -n "$FAKE_ARM64" ]; then echo "$FAKE_ARM64"; else echo "sysctl: unknown oid '$2'" >&2; exit 1; fi`,
		"xcode-select": `[ -n "$FAKE_XCODE" ] || { echo "xcode-select: error: unable to get active developer directory" >&2; exit 2; }; echo "$FAKE_XCODE"`,
		"go": `echo "go $*" >>"$FAKE_LOG"
case "$1" in
env) echo "$FAKE_GOARCH" ;;
version) echo "go version go1.26.0 darwin/$FAKE_GOARCH" ;;
esac`,
	}
	for name, body := range tools {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	}
	return dir
}

// system is a directory with only what setup.sh needs of the system besides
// the faked tools (bash for the scripts' shebangs, dirname), so that no real
// go or xcode-select on this machine answers for the fakes.
func system(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"bash", "dirname"} {
		p, err := exec.LookPath(name)
		require.NoError(t, err)
		require.NoError(t, os.Symlink(p, filepath.Join(dir, name)))
	}
	return dir
}

// The Mac branch of setup.sh, run here by bash with macOS's tools faked
// (this is not macOS's bash 3.2; shellcheck and the GNU-only check above
// cover that): it checks everything before downloading anything, fails
// with the export line to add when no Debian mirror is known, and tells a
// Go that would run under Rosetta 2 by asking the hardware (sysctl
// hw.optional.arm64), not uname -m.
func TestSetupOnAMac(t *testing.T) {
	bash, err := exec.LookPath("bash")
	require.NoError(t, err)
	mac, sys := fakeMac(t), system(t)
	// setup.sh runs in a copy of the scripts it calls, so that what this
	// checkout already installed (bin/tools) does not change what it asks.
	repo := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(repo, "scripts"), 0o755))
	for _, name := range []string{"setup.sh", "fetch-kernel.sh", "install-golangci-lint.sh"} {
		b, err := os.ReadFile(filepath.Join("..", name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(repo, "scripts", name), b, 0o755))
	}
	setup := filepath.Join(repo, "scripts", "setup.sh")
	appleSilicon := map[string]string{"FAKE_UNAME_M": "arm64", "FAKE_ARM64": "1", "FAKE_XCODE": "/Library/Developer/CommandLineTools", "FAKE_GOARCH": "arm64", "QOSLAB_DEBIAN_MIRROR": "https://mirror.example/debian"}
	with := func(changes map[string]string) map[string]string {
		env := map[string]string{}
		for k, v := range appleSilicon {
			env[k] = v
		}
		for k, v := range changes {
			env[k] = v
		}
		return env
	}
	const fetch = "go run ./cmd/qoslab image fetch-kernel --arch arm64"
	const lint = "go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0"
	for _, c := range []struct {
		name       string
		env        map[string]string
		noGo       bool
		wantCode   int
		wantStderr []string
		wantGo     []string // what go was asked, in order; nil: nothing
	}{
		{name: "ready", env: appleSilicon, wantGo: []string{"go mod download", lint, fetch}},
		{name: "no mirror", env: with(map[string]string{"QOSLAB_DEBIAN_MIRROR": ""}), wantCode: 1,
			wantStderr: []string{"no Debian mirror is known", "\nexport QOSLAB_DEBIAN_MIRROR=https://MIRROR/debian\n"}},
		{name: "a Rosetta shell, an amd64 Go", env: with(map[string]string{"FAKE_UNAME_M": "x86_64", "FAKE_GOARCH": "amd64"}), wantCode: 1,
			wantStderr: []string{"this Go builds for amd64 and would run under Rosetta 2"}},
		{name: "a Rosetta shell, the arm64 Go", env: with(map[string]string{"FAKE_UNAME_M": "x86_64"}), wantGo: []string{"go mod download", lint, fetch}},
		{name: "no Xcode tools", env: with(map[string]string{"FAKE_XCODE": ""}), wantCode: 1, wantStderr: []string{"run xcode-select --install"}},
		{name: "no Go", env: appleSilicon, noGo: true, wantCode: 1, wantStderr: []string{"Go is not installed: brew install go"}},
		{name: "nothing there", env: with(map[string]string{"FAKE_XCODE": "", "QOSLAB_DEBIAN_MIRROR": ""}), noGo: true, wantCode: 1,
			wantStderr: []string{"xcode-select --install", "brew install go", "export QOSLAB_DEBIAN_MIRROR="}},
	} {
		t.Run(c.name, func(t *testing.T) {
			bin := mac
			if c.noGo {
				bin = t.TempDir()
				for _, name := range []string{"uname", "sysctl", "xcode-select"} {
					require.NoError(t, os.Symlink(filepath.Join(mac, name), filepath.Join(bin, name)))
				}
			}
			log := filepath.Join(t.TempDir(), "go.log")
			env := []string{"PATH=" + bin + ":" + sys, "HOME=" + t.TempDir(), "FAKE_LOG=" + log}
			for k, v := range c.env {
				env = append(env, k+"="+v)
			}
			cmd := exec.Command(bash, setup)
			cmd.Env = env
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
				code = ee.ExitCode()
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, c.wantCode, code, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			for _, want := range c.wantStderr {
				assert.Contains(t, stderr.String(), want)
			}
			b, _ := os.ReadFile(log)
			var asked []string
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				if line != "" && !strings.HasPrefix(line, "go env") && !strings.HasPrefix(line, "go version") {
					asked = append(asked, line)
				}
			}
			assert.Equal(t, c.wantGo, asked, "failing early: nothing downloaded before everything is checked")
			if c.wantCode == 0 {
				assert.Contains(t, stdout.String(), "setup: ready (go version go1.26.0 darwin/arm64, /Library/Developer/CommandLineTools)")
			}
		})
	}
}
