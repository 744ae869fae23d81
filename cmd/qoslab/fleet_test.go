package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/testvm"
)

// fleetTools finds ansible-playbook (on PATH, or in the venv make
// test-deps links) and sshd; it skips without them, or fails when CI asks for the
// fleet test (QOSLAB_REQUIRE_FLEET=1).
func fleetTools(t *testing.T, repo string) (playbook, sshd string) {
	t.Helper()
	missing := func(why string) { t.Helper(); testvm.MissingFleetTool(t, why, "run make test-deps") }
	playbook, err := exec.LookPath("ansible-playbook")
	if err != nil {
		playbook = filepath.Join(repo, ".venv-ansible", "bin", "ansible-playbook")
		if _, err := os.Stat(playbook); err != nil {
			missing("ansible-playbook is neither on PATH nor in .venv-ansible")
		}
	}
	for _, p := range []string{"/usr/sbin/sshd", "/usr/local/sbin/sshd"} {
		if _, err := os.Stat(p); err == nil {
			sshd = p
		}
	}
	if sshd == "" {
		missing("no sshd (Debian: openssh-server)")
	}
	for _, tool := range []string{"ssh", "ssh-keygen", "git", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing(tool + " is not installed")
		}
	}
	return playbook, sshd
}

// The playbook parses, and passes ansible-lint (its production profile)
// where ansible-lint is installed (make test-deps puts it in .venv-ansible).
func TestFleetPlaybookLints(t *testing.T) {
	t.Parallel()
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	playbook, _ := fleetTools(t, repo)
	dir := filepath.Join(repo, "deploy", "ansible")
	out, err := exec.Command(playbook, "--syntax-check", "-i", "localhost,", filepath.Join(dir, "qoslab-fleet.yml")).CombinedOutput()
	require.NoError(t, err, "%s", out)
	lint := filepath.Join(filepath.Dir(playbook), "ansible-lint")
	if _, err := os.Stat(lint); err != nil {
		testvm.MissingFleetTool(t, "no ansible-lint beside "+playbook, "run make test-deps")
	}
	cmd := exec.Command(lint, "--offline", "--nocolor", "--profile", "production")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(playbook)+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "ansible-lint:\n%s", out)
	assert.Contains(t, string(out), "Passed")
}

// sshdLog is the shared sshd's log, written by its output's copier while
// tests read it.
type sshdLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *sshdLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *sshdLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// fleetSSHD is the one sshd the fleet tests reach their ssh host through:
// started on first use, on a free port of 127.0.0.1, and stopped by
// TestMain. Each fleet lets itself in with a key of its own
// (authorize), so that the log tells its logins from the others'.
var fleetSSHD struct {
	once sync.Once
	err  error
	dir  string
	port int
	cmd  *exec.Cmd
	log  sshdLog
	// mu guards authorized_keys.
	mu   sync.Mutex
	keys []byte
}

// sharedSSHD starts the fleet tests' sshd once (t only reports its
// failure) and returns its port.
func sharedSSHD(t *testing.T, sshd string) int {
	t.Helper()
	fleetSSHD.once.Do(func() { fleetSSHD.err = startSSHD(sshd) })
	require.NoError(t, fleetSSHD.err, "sshd: %s", fleetSSHD.log.String())
	return fleetSSHD.port
}

// startSSHD runs an sshd on a free port of 127.0.0.1, in a new directory
// with a host key made here, that lets the current user in with the keys
// authorize adds; it waits until the port answers.
func startSSHD(sshd string) error {
	dir, err := os.MkdirTemp("", "qoslab-test-sshd-")
	if err != nil {
		return err
	}
	fleetSSHD.dir = dir
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, "host_key")).CombinedOutput(); err != nil {
		return fmt.Errorf("ssh-keygen: %w: %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), nil, 0o600); err != nil {
		return err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return err
	}
	sftp := ""
	for _, p := range []string{"/usr/lib/openssh/sftp-server", "/usr/libexec/openssh/sftp-server", "/usr/libexec/sftp-server"} {
		if _, err := os.Stat(p); err == nil {
			sftp = "Subsystem sftp " + p + "\n"
		}
	}
	config := fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
AuthorizedKeysFile %s
PidFile %s
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
LogLevel VERBOSE
%s`, port, filepath.Join(dir, "host_key"), filepath.Join(dir, "authorized_keys"), filepath.Join(dir, "sshd.pid"), sftp)
	if err := os.WriteFile(filepath.Join(dir, "sshd_config"), []byte(config), 0o600); err != nil {
		return err
	}
	if os.Geteuid() == 0 {
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			return fmt.Errorf("sshd's privilege separation directory: %w", err)
		}
	}
	cmd := exec.Command(sshd, "-D", "-e", "-f", filepath.Join(dir, "sshd_config"))
	cmd.Stdout, cmd.Stderr = &fleetSSHD.log, &fleetSSHD.log
	// Its log is a pipe that the sshd serving a connection inherits: once
	// sshd is killed, Wait waits for no connection left open.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return err
	}
	fleetSSHD.cmd = cmd
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			fleetSSHD.port = port
			return c.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sshd did not listen on port %d within 10 s", port)
		}
	}
}

// stopFleetSSHD stops the shared sshd, if it was started, and removes its
// directory.
func stopFleetSSHD() {
	if c := fleetSSHD.cmd; c != nil {
		_ = c.Process.Kill()
		_ = c.Wait()
	}
	if fleetSSHD.dir != "" {
		_ = os.RemoveAll(fleetSSHD.dir)
	}
}

// authorize makes a client key in dir, lets it into the shared sshd, and
// returns the key and its fingerprint as sshd logs it.
func authorize(t *testing.T, dir string) (key, fingerprint string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o700))
	key = filepath.Join(dir, "client_key")
	out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput()
	require.NoError(t, err, "ssh-keygen: %s", out)
	out, err = exec.Command("ssh-keygen", "-l", "-f", key+".pub").CombinedOutput()
	require.NoError(t, err, "ssh-keygen -l: %s", out)
	fields := strings.Fields(string(out)) // 256 SHA256:... comment (ED25519)
	require.GreaterOrEqual(t, len(fields), 2, "ssh-keygen -l: %s", out)
	pub, err := os.ReadFile(key + ".pub")
	require.NoError(t, err)
	fleetSSHD.mu.Lock()
	defer fleetSSHD.mu.Unlock()
	fleetSSHD.keys = append(fleetSSHD.keys, pub...)
	// Whole or not at all: sshd reads the file at every login.
	keys := filepath.Join(fleetSSHD.dir, "authorized_keys")
	require.NoError(t, os.WriteFile(keys+".new", fleetSSHD.keys, 0o600))
	require.NoError(t, os.Rename(keys+".new", keys))
	return key, fields[1]
}

// fleet is the inventory hosts on this machine for the playbook: local,
// and ssh, reached over SSH through an sshd started by the test; and, when
// asked, gone, which nothing answers.
type fleet struct {
	repo, playbook, bins, tmp, inventory, results string
	user                                          string
	// fleetID is the inventory's qoslab_fleet_id: where the hosts keep
	// their results.
	fleetID string
	// keyFingerprint is the fleet's own client key's, as sshd logs it.
	keyFingerprint string
}

// fleetOptions shape a test fleet.
type fleetOptions struct {
	// spec is a file under testdata/fleet, set as the group's qoslab_spec.
	spec string
	// buildOnSSH makes the ssh host build qoslab from the source there.
	buildOnSSH bool
	// unreachable adds the host gone, on a port nothing listens on.
	unreachable bool
	// vars are more group variables (YAML lines).
	vars []string
}

// newFleet starts the sshd and writes the inventory. Everything the
// playbook is told is in the inventory file, as a user would write it: the
// group's variables (the spec, the fleet id, the binaries) and the "all"
// group's for the controller's play (where results come back, the qoslab
// that compares); nothing is passed with -e.
func newFleet(t *testing.T, o fleetOptions) *fleet {
	t.Helper()
	testvm.Slow(t, "runs ansible-playbook")
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	f := &fleet{repo: repo, tmp: t.TempDir(), fleetID: "grouped"}
	f.results = filepath.Join(f.tmp, "fleet-results")
	var sshd string
	f.playbook, sshd = fleetTools(t, repo)
	f.bins = binaries(t)

	dist := makeDist(t, f.bins, filepath.Join(f.tmp, "dist"))

	port := sharedSSHD(t, sshd)
	var key string
	key, f.keyFingerprint = authorize(t, filepath.Join(f.tmp, "ssh"))
	me, err := user.Current()
	require.NoError(t, err)
	f.user = me.Username
	python := hostPython()
	gone := ""
	if o.unreachable {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		closed := l.Addr().(*net.TCPAddr).Port
		require.NoError(t, l.Close())
		gone = fmt.Sprintf(`    gone:
      ansible_host: 127.0.0.1
      ansible_port: %d
      ansible_user: %s
      ansible_ssh_common_args: -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=5
`, closed, f.user)
	}
	inventory := fmt.Sprintf(`all:
  vars:
    qoslab_controller: %[9]s
    qoslab_fleet_results: %[10]s
qoslab:
  hosts:
    local:
      ansible_connection: local
      ansible_python_interpreter: %[1]s
      qoslab_remote_dir: %[2]s/hosts/local
    ssh:
      ansible_host: 127.0.0.1
      ansible_port: %[3]d
      ansible_user: %[4]s
      ansible_ssh_private_key_file: %[5]s
      ansible_ssh_common_args: -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o IdentitiesOnly=yes
      ansible_python_interpreter: %[1]s
      qoslab_remote_dir: %[2]s/hosts/ssh
      qoslab_build_on_host: %[6]t
%[11]s  vars:
    qoslab_dist: %[7]s
    qoslab_spec: %[8]s
    qoslab_fleet_id: %[12]s
`, python, f.tmp, port, f.user, key, o.buildOnSSH, dist, filepath.Join(repo, "testdata", "fleet", o.spec),
		filepath.Join(f.bins, "qoslab"), f.results, gone, f.fleetID)
	for _, v := range o.vars {
		inventory += "    " + v + "\n"
	}
	t.Cleanup(func() { stopControlMasters(filepath.Join(f.tmp, "ansible-cp")) })
	f.inventory = filepath.Join(f.tmp, "inventory.yml")
	require.NoError(t, os.WriteFile(f.inventory, []byte(inventory), 0o644))
	return f
}

// stopControlMasters ends the SSH connections that ansible keeps open for
// reuse (ControlPersist: a minute after their last use) through the control
// sockets in dir: else they, and the sshd processes serving them, outlive
// the test by that minute.
func stopControlMasters(dir string) {
	socks, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, s := range socks {
		_ = exec.Command("ssh", "-o", "ControlPath="+s, "-O", "exit", "qoslab-fleet-test").Run()
	}
}

// sshdLog is the shared sshd's log (its other fleets' logins included).
func (f *fleet) sshdLog() string { return fleetSSHD.log.String() }

// play runs the playbook with the inventory alone and returns its output,
// exit status and how long it took.
func (f *fleet) play(t *testing.T) (string, int, time.Duration) {
	t.Helper()
	cmd := exec.Command(f.playbook, "-i", f.inventory, filepath.Join(f.repo, "deploy", "ansible", "qoslab-fleet.yml"),
		"-f", "1") // the hosts are this machine: their runs must not overlap
	cmd.Dir = f.tmp
	cmd.Env = append(os.Environ(),
		"ANSIBLE_LOCAL_TEMP="+filepath.Join(f.tmp, "ansible-local"),
		"ANSIBLE_SSH_CONTROL_PATH_DIR="+filepath.Join(f.tmp, "ansible-cp"),
		"ANSIBLE_NOCOLOR=1", "ANSIBLE_FORCE_COLOR=0")
	began := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(began)
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err, "ansible-playbook:\n%s", out)
	}
	return string(out), code, took
}

// playOK runs the playbook and requires it to succeed.
func (f *fleet) playOK(t *testing.T) (string, time.Duration) {
	t.Helper()
	out, code, took := f.play(t)
	require.Equal(t, 0, code, "ansible-playbook:\n%s\nsshd:\n%s", out, f.sshdLog())
	return out, took
}

// fetched checks that each host's one results directory named prefix-*
// came back whole, and returns them by host.
func (f *fleet) fetched(t *testing.T, prefix string) map[string]string {
	t.Helper()
	runs := map[string]string{}
	for _, host := range []string{"local", "ssh"} {
		dirs, err := filepath.Glob(filepath.Join(f.results, host, prefix+"-*"))
		require.NoError(t, err)
		require.Len(t, dirs, 1, "%s's results directory came back", host)
		for _, name := range []string{"run.json", "samples.jsonl", "summary.csv", "report.html"} {
			_, err := os.Stat(filepath.Join(dirs[0], name))
			assert.NoError(t, err, "%s: %s", host, name)
		}
		runs[host] = dirs[0]
	}
	assert.Regexp(t, "Accepted publickey for "+regexp.QuoteMeta(f.user)+" from .* "+regexp.QuoteMeta(f.keyFingerprint),
		f.sshdLog(), "the ssh host was reached over SSH, with this fleet's key")
	return runs
}

// The fleet playbook for real, against three inventory hosts on this
// machine: one local, one reached over SSH (an sshd started here) that
// builds qoslab from the source there, and one that nothing answers. The
// spec (a small host-only one) and the fleet id are the inventory group's
// variables, with no -e: they must win over the playbook's defaults. Both
// results directories must come back, the comparison, the table printed
// and the report must name the host that did not and why, the hosts must
// keep no archive, and a second playbook run measure nothing again.
func TestFleetPlaybook(t *testing.T) {
	t.Parallel()
	f := newFleet(t, fleetOptions{spec: "host-only.yaml", buildOnSSH: true, unreachable: true})
	out, code, took := f.play(t)
	t.Logf("three-host fleet run, one unreachable: %s wall", took.Round(100*time.Millisecond))
	assert.Equal(t, 2, code, "a host did not come back: the playbook ends failed\n%s\nsshd:\n%s", out, f.sshdLog())
	assert.Contains(t, out, "gone did not come back: unreachable: ")
	runs := f.fetched(t, "fleet-host")
	for host := range runs {
		dirs, err := filepath.Glob(filepath.Join(f.tmp, "hosts", host, "results", f.fleetID, "fleet-host-*"))
		require.NoError(t, err)
		assert.Len(t, dirs, 1, "%s ran the group's qoslab_spec under the group's qoslab_fleet_id", host)
		_, err = os.Stat(filepath.Join(f.tmp, "hosts", host, "results", f.fleetID+".tar.gz"))
		assert.True(t, os.IsNotExist(err), "%s keeps no archive of its results after the fetch", host)
	}
	missing := "gone: did not come back (unreachable: "
	table, err := os.ReadFile(filepath.Join(f.results, "compare.md"))
	require.NoError(t, err)
	assert.Contains(t, string(table), "| TARGET | QOS | THREADS | local | ssh | vs base |", "one column per host that came back, labelled by inventory name")
	// The verdict per machine: a host-only spec gives no verdict, the host's
	// ratio (whatever it measured) at 95%, and the host that did not come
	// back its row.
	assert.Regexp(t, `(?m)^\| local \| no verdict \| - \| `+ratioCell+` \| - \|$`, string(table))
	assert.Contains(t, string(table), "| gone | did not come back | - | - | - |")
	assert.Contains(t, string(table), "| host | 9 background | 1 |")
	assert.Contains(t, string(table), missing, "compare.md names the host that did not come back, and why")
	printed := taskOutput(out, "Print the table")
	assert.Contains(t, printed, "TARGET  QOS", "the playbook prints the table")
	assert.Contains(t, printed, missing, "the printed table's header names it")
	report, err := os.ReadFile(filepath.Join(f.results, "report", "report.html"))
	require.NoError(t, err)
	assert.Regexp(t, `<th( class="num")?>ssh</th>`, string(report), "a column per run")
	assert.Contains(t, string(report), "gone did not come back (unreachable: ", "the report names it")
	t.Logf("the compare table it printed:\n%s", table)

	// Again: every host's run finished, so nothing is measured anew.
	out, code, took = f.play(t)
	t.Logf("the same again: %s wall", took.Round(100*time.Millisecond))
	assert.Equal(t, 2, code, out)
	for host, dir := range runs {
		dirs, err := filepath.Glob(filepath.Join(f.tmp, "hosts", host, "results", f.fleetID, "*"))
		require.NoError(t, err)
		assert.Equal(t, []string{filepath.Base(dir)}, baseNames(dirs), "%s: no new results directory on a second playbook run", host)
	}
	task := taskOutput(out, "Run the experiment")
	assert.Contains(t, task, "ok: [local]")
	assert.Contains(t, task, "ok: [ssh]")
	assert.NotContains(t, task, "changed:", "the second run measures nothing: %s", task)
}

// The playbook against this machine alone, as `-i localhost, -c local`:
// its results come back, and with one run there is nothing to compare,
// which is said, not failed.
func TestFleetPlaybookLocalhost(t *testing.T) {
	t.Parallel()
	testvm.Slow(t, "runs ansible-playbook")
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	playbook, _ := fleetTools(t, repo)
	bins := binaries(t)
	tmp := t.TempDir()
	dist := makeDist(t, bins, filepath.Join(tmp, "dist"))
	cmd := exec.Command(playbook, "-i", "localhost,", "-c", "local", filepath.Join(repo, "deploy", "ansible", "qoslab-fleet.yml"),
		"-e", "qoslab_group=all",
		"-e", "qoslab_spec="+filepath.Join(repo, "testdata", "fleet", "host-only.yaml"),
		"-e", "qoslab_dist="+dist,
		"-e", "qoslab_remote_dir="+filepath.Join(tmp, "host"),
		"-e", "qoslab_controller="+filepath.Join(bins, "qoslab"),
		"-e", "qoslab_fleet_results="+filepath.Join(tmp, "fleet-results"),
		"-e", "ansible_python_interpreter="+hostPython())
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "ANSIBLE_LOCAL_TEMP="+filepath.Join(tmp, "ansible-local"), "ANSIBLE_NOCOLOR=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	dirs, err := filepath.Glob(filepath.Join(tmp, "fleet-results", "localhost", "fleet-host-*", "samples.jsonl"))
	require.NoError(t, err)
	assert.Len(t, dirs, 1, "the run came back to fleet-results/localhost/")
	assert.Contains(t, string(out), "one run came back (localhost): nothing to compare it with")
	_, err = os.Stat(filepath.Join(tmp, "fleet-results", "compare.md"))
	assert.True(t, os.IsNotExist(err), "no comparison of one run")
}

// A spec with a VM: each host builds the guest image there, boots it (TCG
// here, as qoslab_run_args says) and measures in it; the comparison leads
// with a verdict for each, whichever the rule gives.
func TestFleetPlaybookVM(t *testing.T) {
	t.Parallel()
	vmPrereqs(t)
	f := newFleet(t, fleetOptions{spec: "vm.yaml", vars: []string{"qoslab_run_args: ['--accel', 'tcg']"}})
	_, took := f.playOK(t)
	t.Logf("two-host fleet run with a VM: %s wall", took.Round(100*time.Millisecond))
	f.fetched(t, "fleet-vm")
	for _, host := range []string{"local", "ssh"} {
		_, err := os.Stat(filepath.Join(f.tmp, "hosts", host, "images", "linux"))
		assert.NoError(t, err, "%s built its guest image", host)
	}
	table, err := os.ReadFile(filepath.Join(f.results, "compare.md"))
	require.NoError(t, err)
	md := string(table)
	// Each host is judged, and the verdict is whatever the rule makes of
	// what this machine measured: on a loaded 2-CPU machine the host's
	// effect can miss significance (SI n/a), or the VM's interval cross the
	// band's edge. What must hold is that both hosts have their row, in the
	// table's format (SI a number with its interval, or n/a; a ratio, or -
	// for a side that did no work), and that a verdict other than yes says
	// why.
	assert.Contains(t, md, "| RUN | VERDICT | SI | HOST 33/9 | VM 33/9 |", "the verdict per machine leads")
	for _, host := range []string{"local", "ssh"} {
		row := regexp.MustCompile(`(?m)^\| ` + host + ` \| (yes|no|inconclusive) \| (n/a|-?\d\.\d{3} \[-?\d\.\d{3}\.\.-?\d\.\d{3}\]) \| ` +
			`(-|` + ratioCell + `) \| (-|` + ratioCell + `) \|` + mechanismCell + `$`).FindStringSubmatch(md)
		require.NotNil(t, row, "%s's verdict row:\n%s", host, md)
		if row[1] != "yes" {
			assert.Regexp(t, `(?m)^- (\S+, )*`+host+`(, \S+)*: `+row[1]+`: \S`, md, "%s: why it is %s", host, row[1])
		}
	}
	assert.Contains(t, md, "| vm | 33 user-interactive | 1 |")
}

// ratioCell is a ratio in the verdict per machine: its estimate, its
// interval, and the coverage when it is not the verdict's 90% ("-" where a
// side has none, as when it did no work).
const ratioCell = `[\d.]+x \[[\d.]+\.\.[\d.]+\]( \(\d+%\))?`

// mechanismCell is the verdict per machine's MECHANISM column, there only
// when the machines' mechanisms differ (else it is said once, above the
// table): where each target's effect was ("in CPU share", "alike",
// "cannot tell", "not enough"), each thread count's where they differ ("in
// CPU share at 1 thread, alike at 2 threads"), or - without a verdict.
const mechanismCell = `( (-|not recorded|host [A-Za-z ]+( at \d+ threads?)?(, [A-Za-z ]+ at \d+ threads?)*, vm [A-Za-z ]+( at \d+ threads?)?(, [A-Za-z ]+ at \d+ threads?)*) \|)?`

// makeDist lays out in dir what make dist makes, for this machine's OS and
// arch, from the binaries in bins.
func makeDist(t *testing.T, bins, dir string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	osArch := runtime.GOOS + "-" + runtime.GOARCH
	copyFile(t, filepath.Join(bins, "qoslab"), filepath.Join(dir, "qoslab-"+osArch))
	copyFile(t, filepath.Join(bins, "qoslab-agent"), filepath.Join(dir, "qoslab-agent-"+osArch))
	copyFile(t, filepath.Join(bins, "qoslab-agent"), filepath.Join(dir, "qoslab-agent-linux-"+runtime.GOARCH))
	return dir
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, b, 0o755))
}

func baseNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}

// taskOutput is what ansible-playbook printed for the task whose name starts
// with name, up to the next task.
func taskOutput(out, name string) string {
	_, rest, ok := strings.Cut(out, "TASK ["+name)
	if !ok {
		return ""
	}
	task, _, _ := strings.Cut(rest, "\nTASK [")
	return task
}

// hostPython is the Python the test's hosts run Ansible's modules with: the
// system's, where interpreter discovery could land on a version manager's
// shim for a version that is not installed.
func hostPython() string {
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	return "auto_silent"
}
