package signing

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/testvm"
)

// repoFile is a file of the repository, from this package's directory
// (where go test runs).
func repoFile(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", rel))
	require.NoError(t, err)
	require.FileExists(t, p)
	return p
}

func needBash(t *testing.T) string {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	return bash
}

type scriptResult struct {
	stdout, stderr string
	code           int
}

// runScript runs a repository script with bash, with this environment less
// CODESIGN_IDENTITY, plus env.
func runScript(t *testing.T, env []string, script string, args ...string) scriptResult {
	t.Helper()
	cmd := exec.Command(needBash(t), append([]string{repoFile(t, script)}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CODESIGN_IDENTITY=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(t, err, "run %s", script)
	}
	return scriptResult{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}

func TestScriptsParse(t *testing.T) {
	bash := needBash(t)
	for _, script := range []string{"scripts/codesign.sh", "scripts/darwin-smoke.sh"} {
		t.Run(script, func(t *testing.T) {
			out, err := exec.Command(bash, "-n", repoFile(t, script)).CombinedOutput()
			assert.NoError(t, err, "bash -n %s: %s", script, out)
			info, err := os.Stat(repoFile(t, script))
			require.NoError(t, err)
			assert.NotZero(t, info.Mode()&0o111, "%s must be executable: the Makefile runs it directly", script)
		})
	}
}

func TestRepoEntitlementsFile(t *testing.T) {
	data, err := os.ReadFile(repoFile(t, "qoslab.entitlements"))
	require.NoError(t, err)
	e, err := parseEntitlements(data)
	require.NoError(t, err)
	assert.NoError(t, e.Require(virtualizationEntitlement))
	// An entitlement more is a reason to look again: some, such as
	// com.apple.vm.networking, stop an ad-hoc signed binary from starting.
	assert.Equal(t, []string{virtualizationEntitlement}, e.Keys())
}

func TestCodesignScriptOffMacOS(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("on macOS the script signs for real")
	}
	bin := filepath.Join(t.TempDir(), "qoslab")
	require.NoError(t, os.WriteFile(bin, []byte("not a Mach-O"), 0o755))

	r := runScript(t, nil, "scripts/codesign.sh", bin)
	assert.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	assert.Contains(t, r.stdout, "signing is only needed on macOS")
	data, err := os.ReadFile(bin)
	require.NoError(t, err)
	assert.Equal(t, "not a Mach-O", string(data), "the binary must be left alone")

	// The same with the entitlements file named.
	r = runScript(t, nil, "scripts/codesign.sh", bin, repoFile(t, "qoslab.entitlements"))
	assert.Equal(t, 0, r.code, "stderr: %s", r.stderr)
}

func TestCodesignScriptChecksEntitlementsOffMacOS(t *testing.T) {
	testvm.Slow(t, "runs the signing script once for each entitlements file")
	if runtime.GOOS == "darwin" {
		t.Skip("on macOS the script checks with plutil; see TestCodesignScriptOnFakeMac")
	}
	if err := exec.Command("python3", "-c", "import plistlib").Run(); err != nil {
		t.Skip("off macOS the script checks the file with python3's plistlib, which is not installed")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "qoslab")
	require.NoError(t, os.WriteFile(bin, nil, 0o755))
	for name, plist := range map[string]string{
		"string true": `<plist><dict><key>com.apple.security.virtualization</key><string>true</string></dict></plist>`,
		"false":       `<plist><dict><key>com.apple.security.virtualization</key><false/></dict></plist>`,
		"missing":     `<plist><dict/></plist>`,
		"malformed":   `<plist><dict><key>com.apple.security.virtualization</key>`,
	} {
		t.Run(name, func(t *testing.T) {
			ent := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".entitlements")
			require.NoError(t, os.WriteFile(ent, []byte(plist), 0o644))
			r := runScript(t, nil, "scripts/codesign.sh", bin, ent)
			assert.Equal(t, 1, r.code, "stdout: %s", r.stdout)
			assert.Contains(t, r.stderr, ent)
			assert.NotContains(t, r.stdout, "only needed on macOS")
		})
	}
}

func TestCodesignScriptUsage(t *testing.T) {
	r := runScript(t, nil, "scripts/codesign.sh")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "usage: scripts/codesign.sh BINARY")

	r = runScript(t, nil, "scripts/codesign.sh", "a", "b", "c")
	assert.Equal(t, 2, r.code)

	missing := filepath.Join(t.TempDir(), "qoslab")
	r = runScript(t, nil, "scripts/codesign.sh", missing)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, missing+": no such file; build it first (make build)")

	bin := filepath.Join(t.TempDir(), "qoslab")
	require.NoError(t, os.WriteFile(bin, nil, 0o755))
	r = runScript(t, nil, "scripts/codesign.sh", bin, filepath.Join(t.TempDir(), "none.entitlements"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "no such entitlements file")
}

// fakeMac puts uname, plutil and codesign stand-ins first in PATH, so the
// macOS half of codesign.sh runs here: uname says Darwin, plutil -lint
// passes and -convert xml1 puts one element per line as the real one does,
// codesign logs its arguments and, for -d, prints the file named by
// FAKE_CODESIGN_OUT.
func fakeMac(t *testing.T) (env []string, log string) {
	t.Helper()
	if _, err := exec.LookPath("awk"); err != nil {
		t.Skip("awk is not installed")
	}
	dir := t.TempDir()
	log = filepath.Join(dir, "codesign.log")
	tools := map[string]string{
		"uname": "#!/bin/sh\necho Darwin\n",
		"plutil": `#!/bin/sh
case "$1" in
-lint) exit 0 ;;
-convert) awk '{ gsub(/></, ">\n<"); print }' "$5" ;;
*) echo "fake plutil: unexpected $*" >&2; exit 64 ;;
esac
`,
		"codesign": `#!/bin/sh
echo "$*" >>"$FAKE_CODESIGN_LOG"
case "$1" in
--force|--verify) exit 0 ;;
-d) echo "Executable=$5" >&2; cat "$FAKE_CODESIGN_OUT" ;;
*) echo "fake codesign: unexpected $*" >&2; exit 64 ;;
esac
`,
	}
	for name, body := range tools {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755))
	}
	env = []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH"), "FAKE_CODESIGN_LOG=" + log}
	return env, log
}

func TestCodesignScriptOnFakeMac(t *testing.T) {
	ent := repoFile(t, "qoslab.entitlements")
	tests := []struct {
		name       string
		identity   string // CODESIGN_IDENTITY, "" for unset
		signedWith string // what codesign -d prints
		code       int
		stdout     string
		stderr     string
	}{
		{"ad hoc", "", codesignXML, 0, "signed BIN (ad hoc) with com.apple.security.virtualization", ""},
		{"identity", "Developer ID Application: Q Lab (ABCDE12345)", codesignXML, 0, "(by Developer ID Application: Q Lab (ABCDE12345))", ""},
		{"no entitlements read back", "", "", 1, "", "signed, but the signature carries no entitlements"},
		{"other entitlement read back", "", `<plist><dict><key>com.apple.security.cs.allow-jit</key><true/></dict></plist>`, 1, "", "is not in its entitlements"},
		{"false read back", "", `<plist><dict><key>com.apple.security.virtualization</key><false/></dict></plist>`, 1, "", "is not in its entitlements"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, log := fakeMac(t)
			dir := t.TempDir()
			bin := filepath.Join(dir, "qoslab")
			require.NoError(t, os.WriteFile(bin, nil, 0o755))
			out := filepath.Join(dir, "codesign-d.out")
			require.NoError(t, os.WriteFile(out, []byte(tt.signedWith), 0o644))
			env = append(env, "FAKE_CODESIGN_OUT="+out)
			identity := "-"
			if tt.identity != "" {
				env = append(env, "CODESIGN_IDENTITY="+tt.identity)
				identity = tt.identity
			}

			r := runScript(t, env, "scripts/codesign.sh", bin)
			assert.Equal(t, tt.code, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
			if tt.stdout != "" {
				assert.Contains(t, r.stdout, strings.ReplaceAll(tt.stdout, "BIN", bin))
			}
			if tt.stderr != "" {
				assert.Contains(t, r.stderr, tt.stderr)
			}
			calls, err := os.ReadFile(log)
			require.NoError(t, err)
			assert.Equal(t, []string{
				"--force --sign " + identity + " --entitlements " + ent + " " + bin,
				"--verify --strict " + bin,
				"-d --entitlements - --xml " + bin,
			}, strings.Split(strings.TrimSpace(string(calls)), "\n"))
		})
	}
}

func TestCodesignScriptOnFakeMacRefusesEntitlementsFile(t *testing.T) {
	env, log := fakeMac(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "qoslab")
	require.NoError(t, os.WriteFile(bin, nil, 0o755))
	ent := filepath.Join(dir, "other.entitlements")
	require.NoError(t, os.WriteFile(ent, []byte(`<plist><dict><key>com.apple.security.virtualization</key><string>true</string></dict></plist>`), 0o644))

	r := runScript(t, env, "scripts/codesign.sh", bin, ent)
	assert.Equal(t, 1, r.code, "stdout: %s", r.stdout)
	assert.Contains(t, r.stderr, ent+": com.apple.security.virtualization is not <true/>")
	assert.NoFileExists(t, log, "nothing may be signed with a wrong entitlements file")
}

func TestDarwinSmokeRefusesOffMacOS(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("on macOS the script runs the whole end-to-end path")
	}
	r := runScript(t, nil, "scripts/darwin-smoke.sh", t.TempDir())
	assert.Equal(t, 2, r.code, "stdout: %s", r.stdout)
	assert.Contains(t, r.stderr, "end-to-end test for macOS on Apple silicon")
	assert.Empty(t, r.stdout, "nothing may run before the platform check")
}
