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
install) name=${2%@*}; name=${name##*/}; printf '#!/bin/sh\necho %s\n' "$name" >"$GOBIN/$name"; chmod +x "$GOBIN/$name" ;;
esac`,
	}
	for name, body := range tools {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	}
	return dir
}

// system is a directory with only what the scripts need of the system
// besides the faked tools (bash and sh for the scripts' shebangs, dirname;
// for test-deps.sh what it links and moves with), so that no real go or
// xcode-select on this machine answers for the fakes.
func system(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"bash", "sh", "dirname", "mkdir", "mktemp", "mv", "rm", "ln", "chmod"} {
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
	setup := filepath.Join(checkout(t), "scripts", "setup.sh")
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
	for _, c := range []struct {
		name       string
		env        map[string]string
		noGo       bool
		wantCode   int
		wantStderr []string
		wantGo     []string // what go was asked, in order; nil: nothing
	}{
		// What make run needs, and no more: the tests' tools are
		// test-deps.sh's.
		{name: "ready", env: appleSilicon, wantGo: []string{"go mod download", fetch}},
		{name: "no mirror", env: with(map[string]string{"QOSLAB_DEBIAN_MIRROR": ""}), wantCode: 1,
			wantStderr: []string{"no Debian mirror is known", "\nexport QOSLAB_DEBIAN_MIRROR=https://MIRROR/debian\n"}},
		{name: "a Rosetta shell, an amd64 Go", env: with(map[string]string{"FAKE_UNAME_M": "x86_64", "FAKE_GOARCH": "amd64"}), wantCode: 1,
			wantStderr: []string{"this Go builds for amd64 and would run under Rosetta 2"}},
		{name: "a Rosetta shell, the arm64 Go", env: with(map[string]string{"FAKE_UNAME_M": "x86_64"}), wantGo: []string{"go mod download", fetch}},
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
			assert.Equal(t, c.wantGo, goAsked(t, log), "failing early: nothing downloaded before everything is checked")
			if c.wantCode == 0 {
				assert.Contains(t, stdout.String(), "setup: ready (go version go1.26.0 darwin/arm64, /Library/Developer/CommandLineTools)")
			}
		})
	}
}

// checkout is a copy of the scripts setup.sh and test-deps.sh call, so that
// what this checkout already installed (bin/tools) does not change what
// they ask.
func checkout(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(repo, "scripts"), 0o755))
	for _, name := range []string{"setup.sh", "test-deps.sh", "fetch-kernel.sh", "install-vhost-device-vsock.sh"} {
		b, err := os.ReadFile(filepath.Join("..", name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(repo, "scripts", name), b, 0o755))
	}
	return repo
}

// goAsked is what the fake go was asked to do, in order, less its
// questions (go env, go version).
func goAsked(t *testing.T, log string) []string {
	t.Helper()
	b, _ := os.ReadFile(log)
	var asked []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line != "" && !strings.HasPrefix(line, "go env") && !strings.HasPrefix(line, "go version") {
			asked = append(asked, line)
		}
	}
	return asked
}

// test-deps.sh on a Mac (faked as above) builds the two Go tools make test
// needs, pinned, once per machine: a second checkout on the same machine
// gets them linked without building them again; nothing else is asked
// (no apt, no cargo, no kernel: the Mac's VM tests skip without QEMU).
func TestTestDepsOnAMac(t *testing.T) {
	bash, err := exec.LookPath("bash")
	require.NoError(t, err)
	mac, sys := fakeMac(t), system(t)
	data := t.TempDir() // XDG_DATA_HOME: this machine's
	run := func(repo string) (log string) {
		log = filepath.Join(t.TempDir(), "go.log")
		cmd := exec.Command(bash, filepath.Join(repo, "scripts", "test-deps.sh"))
		cmd.Env = []string{"PATH=" + mac + ":" + sys, "HOME=" + t.TempDir(), "XDG_DATA_HOME=" + data, "TMPDIR=" + t.TempDir(), "FAKE_LOG=" + log, "FAKE_GOARCH=arm64"}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return log
	}
	first := checkout(t)
	assert.Equal(t, []string{
		"go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0",
		"go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12",
	}, goAsked(t, run(first)))
	second := checkout(t)
	assert.Empty(t, goAsked(t, run(second)), "built once per machine")
	for _, repo := range []string{first, second} {
		for _, tool := range []string{"golangci-lint", "actionlint"} {
			out, err := exec.Command(filepath.Join(repo, "bin", "tools", tool)).Output()
			require.NoError(t, err, "%s linked in %s", tool, repo)
			assert.Equal(t, tool+"\n", string(out))
		}
	}
	_, err = os.Stat(filepath.Join(data, "qoslab", "tools", "golangci-lint@v2.15.0", "golangci-lint"))
	assert.NoError(t, err, "in qoslab's tools directory, by version")
}
