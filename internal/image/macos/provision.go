package macos

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"

	"github.com/qoslab/qoslab/internal/hv/vz"
	"github.com/qoslab/qoslab/internal/shquote"
)

// How the agent gets into a guest.
const (
	viaOffline = "offline"
	viaSSH     = "ssh"
)

// ProvisionOptions says which guest gets the agent, and how.
type ProvisionOptions struct {
	// Bundle is the guest's bundle. Offline provisioning (the default)
	// attaches its disk, so the VM must be stopped; it runs on the Mac as
	// root, because the files must be owned by root in the guest.
	Bundle string
	// Agent is the agent built for darwin/arm64.
	Agent string
	// SSH, when set to USER@HOST or USER@HOST:PORT, provisions a running
	// guest with Remote Login over ssh instead: USER needs key login and
	// passwordless sudo there. Bundle is then not touched.
	SSH string
	// Log gets a line per step; nil is silent.
	Log io.Writer
}

// ProvisionResult says what Provision installed.
type ProvisionResult struct {
	Via   string
	Agent AgentBinary
	// Files are the guest paths written.
	Files []string
}

// Provision installs the agent in a macOS guest as a LaunchDaemon: the
// binary, the daemon's plist and (offline) the setup-done marker. Every
// check (the binary, the bundle, privilege, tools, for ssh the login and
// sudo) runs before anything is copied.
func Provision(ctx context.Context, opts ProvisionOptions) (ProvisionResult, error) {
	return newProvisioner(opts.Log).provision(ctx, opts)
}

// provisioner holds what provisioning needs from the system, so tests can
// replace each piece.
type provisioner struct {
	goos       string
	geteuid    func() int
	lookPath   func(string) (string, error)
	run        func(ctx context.Context, name string, args ...string) ([]byte, error)
	lockBundle func(dir string) (unlock func(), err error)
	// chown sets a written file's owner; the file is open, so the change
	// cannot follow a symlink elsewhere.
	chown      func(f *os.File, uid, gid int) error
	tempDir    string // for the mount point and the ssh staging plist; "" is os.TempDir
	random     func() string
	checkAgent func(path string) (AgentBinary, error)
	log        io.Writer
}

func newProvisioner(log io.Writer) *provisioner {
	return &provisioner{
		goos:       runtime.GOOS,
		geteuid:    os.Geteuid,
		lookPath:   exec.LookPath,
		run:        runCommand,
		lockBundle: lockBundle,
		chown:      func(f *os.File, uid, gid int) error { return f.Chown(uid, gid) },
		random:     randomHex,
		checkAgent: checkAgentBinary,
		log:        log,
	}
}

func (p *provisioner) logf(format string, args ...any) {
	if p.log != nil {
		fmt.Fprintf(p.log, format+"\n", args...)
	}
}

func (p *provisioner) provision(ctx context.Context, opts ProvisionOptions) (ProvisionResult, error) {
	res := ProvisionResult{Via: viaOffline}
	if opts.SSH != "" {
		res.Via = viaSSH
	}
	// Privilege first: it is what a user can fix without rebuilding
	// anything, and it says up front that sudo is needed.
	if res.Via == viaOffline {
		if err := p.checkOfflineHost(); err != nil {
			return res, err
		}
	}
	agent, err := p.checkAgent(opts.Agent)
	if err != nil {
		return res, err
	}
	res.Agent = agent
	daemon, err := launchDaemonPlist()
	if err != nil {
		return res, fmt.Errorf("launchd plist: %w", err)
	}
	if res.Via == viaSSH {
		res.Files, err = p.provisionSSH(ctx, opts.SSH, agent.Path, daemon)
	} else {
		res.Files, err = p.provisionOffline(ctx, opts.Bundle, agent.Path, daemon)
	}
	return res, err
}

// checkOfflineHost says what offline provisioning needs of this machine.
func (p *provisioner) checkOfflineHost() error {
	if p.goos != "darwin" {
		return fmt.Errorf("offline provisioning attaches the guest's disk with macOS's hdiutil, so it runs on the Mac; "+
			"from %s, provision a running guest with `--via ssh USER@ADDR`", p.goos)
	}
	if p.geteuid() != 0 {
		return errors.New("offline provisioning writes root-owned files into the guest's disk, so it needs root: " +
			"run `sudo qoslab image provision NAME`, or use `--via ssh USER@ADDR` on a running guest")
	}
	return nil
}

// provisionOffline attaches the stopped guest's disk, mounts its Data
// volume and writes the files there.
func (p *provisioner) provisionOffline(ctx context.Context, bundle, agent string, daemon []byte) (written []string, err error) {
	b, err := vz.OpenBundle(bundle)
	if err != nil {
		return nil, err
	}
	for _, tool := range []string{"hdiutil", "diskutil"} {
		if _, err := p.lookPath(tool); err != nil {
			return nil, fmt.Errorf("offline provisioning needs %s, which macOS has in /usr/bin or /usr/sbin: %w", tool, err)
		}
	}
	unlock, err := p.lockBundle(b.Dir)
	if err != nil {
		return nil, err
	}
	defer unlock()

	// Cleanup runs even after ctx ends: a disk left attached would keep the
	// VM from booting.
	cleanupCtx := context.WithoutCancel(ctx)
	disk := b.Path(vz.DiskFile)
	p.logf("attaching %s", disk)
	out, err := p.run(ctx, "hdiutil", attachArgs(disk)...)
	attached, perr := parseAttach(out)
	if err != nil || perr != nil {
		err = attachFailed(disk, filepath.Base(b.Dir), out, err, perr)
		if derr := p.detachLeftovers(cleanupCtx, disk, attached.Detach); derr != nil {
			err = fmt.Errorf("%w; %w", err, derr)
		}
		return nil, err
	}
	dev := attached.Image
	defer func() {
		if derr := p.detach(cleanupCtx, dev); derr != nil && err == nil {
			err = derr
		}
	}()

	out, err = p.run(ctx, "diskutil", "apfs", "list", "-plist")
	if err != nil {
		return nil, fmt.Errorf("list APFS volumes: %w", err)
	}
	vol, err := findDataVolume(out, dev)
	if err != nil {
		return nil, fmt.Errorf("guest disk %s: %w", disk, err)
	}
	mp, err := os.MkdirTemp(p.tempDir, "qoslab-provision-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(mp)
	p.logf("mounting the guest's Data volume %s (%s)", vol.Name, vol.DeviceIdentifier)
	if _, err := p.run(ctx, "diskutil", "mount", "-mountPoint", mp, vol.DeviceIdentifier); err != nil {
		return nil, fmt.Errorf("mount the guest's Data volume %s: %w", vol.DeviceIdentifier, err)
	}
	defer func() {
		if _, uerr := p.run(cleanupCtx, "diskutil", "unmount", mp); uerr != nil && err == nil {
			err = fmt.Errorf("unmount the guest's Data volume at %s: %w; unmount it with `diskutil unmount %s`", mp, uerr, mp)
		}
	}()
	// An attached volume ignores ownership by default: files would not keep
	// root as their owner, and launchd refuses a daemon plist it cannot
	// trust.
	if _, err := p.run(ctx, "diskutil", "enableOwnership", mp); err != nil {
		return nil, fmt.Errorf("enable ownership on the guest's Data volume: %w", err)
	}
	return writeGuestFiles(mp, guestLayout(agent, daemon), p.chown, p.logf)
}

// attachArgs is `hdiutil attach` of the guest's raw disk, with nothing
// that could make hdiutil ask a question: it runs with stdin at /dev/null,
// where a question is answered "no" and the attach refused. hdiutil(1):
// -noverify skips verifying the image's checksums, -noautofsck the file
// system check before mounting (which can ask about a disk it finds
// damaged), -nobrowse and -noautoopen keep its volumes out of the Finder,
// -owners on honours ownership on any volume it mounts (launchd trusts
// only a root-owned daemon plist), -nomount leaves the mounting to
// provisioning (the Data volume only, where it chooses); the image key
// takes the file as a raw disk whatever its first bytes look like.
func attachArgs(disk string) []string {
	return []string{"attach", "-imagekey", "diskimage-class=CRawDiskImage", "-nomount",
		"-noverify", "-noautofsck", "-nobrowse", "-noautoopen", "-owners", "on", "-plist", disk}
}

// hdiutilQuestion matches a question hdiutil asks on its terminal: "Attach?
// (Y/N)", a licence to agree to.
var hdiutilQuestion = regexp.MustCompile(`(?i)\b(y/n|yes/no)\b|\bagree\b`)

// attachFailed is the error of an attach of disk (the guest NAME's) that
// failed (err: the program's error, with its stderr) or answered with no
// plist it could read (perr): what hdiutil said, quoted, and the way that
// needs no attach at all, provisioning the running guest over ssh.
func attachFailed(disk, name string, out []byte, err, perr error) error {
	printed := strings.TrimSpace(string(out))
	if strings.HasPrefix(printed, "<?xml") {
		printed = "" // a plist, which perr is about
	}
	var stderr string
	var ce *commandError
	if errors.As(err, &ce) {
		stderr = ce.Stderr
	}
	viaSSH := fmt.Sprintf("provision the running guest instead, which attaches nothing: `qoslab image provision %s --via ssh USER@ADDR` (Remote Login on, key login, passwordless sudo)", name)
	if said := strings.TrimSpace(printed + "\n" + stderr); hdiutilQuestion.MatchString(said) {
		return fmt.Errorf("attach the guest disk %s: hdiutil asked a question qoslab cannot answer (it attaches with no terminal, and hdiutil takes no answer as no): %q; %s",
			disk, said, viaSSH)
	}
	cause := err
	if cause == nil {
		cause = perr
	}
	if printed != "" && !strings.Contains(cause.Error(), printed) {
		return fmt.Errorf("attach the guest disk %s: %w; hdiutil printed %q; %s", disk, cause, printed, viaSSH)
	}
	return fmt.Errorf("attach the guest disk %s: %w; %s", disk, cause, viaSSH)
}

// detachLeftovers detaches what a failed attach of image left attached:
// disks when its answer named them, else whatever `hdiutil info` says is
// attached from image.
func (p *provisioner) detachLeftovers(ctx context.Context, image string, disks []string) error {
	if len(disks) == 0 {
		out, err := p.run(ctx, "hdiutil", "info", "-plist")
		if err == nil {
			disks, err = attachedFrom(out, image)
		}
		if err != nil {
			return fmt.Errorf("find what is left attached from %s: %w; look with `hdiutil info` and detach it with `hdiutil detach -force /dev/diskN` before booting the VM", image, err)
		}
	}
	var errs []error
	for _, d := range disks {
		if err := p.detach(ctx, d); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (p *provisioner) detach(ctx context.Context, dev string) error {
	if _, err := p.run(ctx, "hdiutil", "detach", dev); err == nil {
		return nil
	}
	if _, err := p.run(ctx, "hdiutil", "detach", "-force", dev); err != nil {
		return fmt.Errorf("detach the guest disk %s: %w; detach it with `hdiutil detach -force %s` before booting the VM", dev, err, dev)
	}
	return nil
}

// writeGuestFiles writes files under the mounted Data volume at root, owned
// by root:wheel. os.Root keeps every path inside the volume: a guest disk
// is not trusted, and a symlink in it must not send a write run as root to
// the host's own files.
func writeGuestFiles(root string, files []guestFile, chown func(*os.File, int, int) error, logf func(string, ...any)) ([]string, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var written []string
	for _, gf := range files {
		rel := dataVolumePath(gf.Path)
		if err := mkdirAllOwned(r, filepath.Dir(rel), chown); err != nil {
			return written, fmt.Errorf("guest %s: %w", filepath.Dir(gf.Path), err)
		}
		if gf.KeepExisting {
			if _, err := r.Lstat(rel); err == nil {
				logf("keeping the guest's %s", gf.Path)
				continue
			}
		}
		if err := writeOwned(r, rel, gf, chown); err != nil {
			return written, fmt.Errorf("guest %s: %w", gf.Path, err)
		}
		logf("wrote %s (root:wheel %04o)", gf.Path, gf.Mode)
		written = append(written, gf.Path)
	}
	return written, nil
}

// mkdirAllOwned makes dir and its missing parents inside r, root:wheel
// 0755 like the system's own.
func mkdirAllOwned(r *os.Root, dir string, chown func(*os.File, int, int) error) error {
	if dir == "." || dir == "" {
		return nil
	}
	fi, err := r.Lstat(dir)
	if err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory in the guest", dir)
		}
		return nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := mkdirAllOwned(r, filepath.Dir(dir), chown); err != nil {
		return err
	}
	if err := r.Mkdir(dir, 0o755); err != nil {
		return err
	}
	d, err := r.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return chown(d, 0, 0)
}

func writeOwned(r *os.Root, rel string, gf guestFile, chown func(*os.File, int, int) error) error {
	if fi, err := r.Lstat(rel); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("the guest has a %s there, not a file; remove it", fi.Mode().Type())
	}
	f, err := r.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, os.FileMode(gf.Mode))
	if err != nil {
		return err
	}
	err = func() error {
		if gf.Source != "" {
			src, err := os.Open(gf.Source)
			if err != nil {
				return err
			}
			defer src.Close()
			if _, err := io.Copy(f, src); err != nil {
				return err
			}
		} else if _, err := f.Write(gf.Content); err != nil {
			return err
		}
		if err := f.Chmod(os.FileMode(gf.Mode)); err != nil { // the umask narrowed OpenFile's mode
			return err
		}
		if err := chown(f, 0, 0); err != nil {
			return err
		}
		return f.Sync()
	}()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// sshTarget is USER@HOST[:PORT].
type sshTarget struct {
	User, Host, Port string
}

func parseSSHTarget(s string) (sshTarget, error) {
	const form = "USER@HOST or USER@HOST:PORT (IPv6: USER@[ADDR]:PORT)"
	user, hostport, ok := strings.Cut(s, "@")
	if !ok || user == "" || hostport == "" {
		return sshTarget{}, fmt.Errorf("--via ssh %q: want %s", s, form)
	}
	t := sshTarget{User: user, Host: hostport}
	switch {
	case strings.HasPrefix(hostport, "["):
		h, p, err := net.SplitHostPort(hostport)
		if err != nil {
			h, p = strings.Trim(hostport, "[]"), ""
		}
		t.Host, t.Port = h, p
	case strings.Count(hostport, ":") == 1:
		t.Host, t.Port, _ = strings.Cut(hostport, ":")
	}
	for _, part := range []string{t.User, t.Host, t.Port} {
		// A leading "-" would be read as an option by ssh and scp.
		if strings.HasPrefix(part, "-") || strings.ContainsAny(part, " \t\n'\"\\;&|$`") {
			return sshTarget{}, fmt.Errorf("--via ssh %q: %q is not a user, host or port; want %s", s, part, form)
		}
	}
	if t.Host == "" {
		return sshTarget{}, fmt.Errorf("--via ssh %q: no host; want %s", s, form)
	}
	if t.Port != "" {
		var n int
		if _, err := fmt.Sscanf(t.Port, "%d", &n); err != nil || n < 1 || n > 65535 || fmt.Sprint(n) != t.Port {
			return sshTarget{}, fmt.Errorf("--via ssh %q: port %q is not 1..65535", s, t.Port)
		}
	}
	return t, nil
}

// login is USER@HOST as ssh takes it.
func (t sshTarget) login() string { return t.User + "@" + t.Host }

// remote is USER@HOST:PATH as scp takes it.
func (t sshTarget) remote(path string) string {
	host := t.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return t.User + "@" + host + ":" + path
}

// sshOptions never prompt: BatchMode fails instead of asking for a
// password, and a new guest's host key is accepted once and then pinned.
func sshOptions() []string {
	return []string{"-o", "BatchMode=yes", "-o", "ConnectTimeout=15", "-o", "StrictHostKeyChecking=accept-new", "-o", "ServerAliveInterval=15"}
}

// command is one program run, as data.
type command struct {
	Name string
	Args []string
}

func (c command) String() string { return c.Name + " " + strings.Join(c.Args, " ") }

func (t sshTarget) ssh(remoteCmd string) command {
	args := sshOptions()
	if t.Port != "" {
		args = append(args, "-p", t.Port)
	}
	return command{Name: "ssh", Args: append(args, t.login(), remoteCmd)}
}

func (t sshTarget) scp(local, remotePath string) command {
	args := sshOptions()
	if t.Port != "" {
		args = append(args, "-P", t.Port)
	}
	return command{Name: "scp", Args: append(args, local, t.remote(remotePath))}
}

// sshPlan is the ssh path as data: a check that changes nothing, the steps,
// and what undoes a failed step's leftovers.
type sshPlan struct {
	Check   command
	Steps   []command
	Cleanup command
}

// planSSH stages the files in a fresh directory in the guest's /tmp (mkdir
// fails if it exists, so nothing there is trusted), then installs them as
// root and (re)loads the daemon.
func planSSH(t sshTarget, agent, daemonPlist, stage string) sshPlan {
	agentStaged := stage + "/qoslab-agent"
	plistStaged := stage + "/" + agentLabel + ".plist"
	script := strings.Join([]string{
		"set -e",
		"install -d -o root -g wheel -m 0755 " + filepath.Dir(agentGuestPath),
		"install -o root -g wheel -m 0755 " + agentStaged + " " + agentGuestPath,
		"install -o root -g wheel -m 0644 " + plistStaged + " " + agentPlistGuestPath,
		"launchctl bootout system/" + agentLabel + " 2>/dev/null || true",
		// A bootout still tearing the old daemon down makes bootstrap fail
		// for a moment.
		"n=0; until launchctl bootstrap system " + agentPlistGuestPath + "; do n=$((n+1)); [ $n -lt 5 ] || exit 1; sleep 1; done",
		"rm -rf " + stage,
	}, "\n")
	return sshPlan{
		Check: t.ssh("sudo -n true"),
		Steps: []command{
			t.ssh("mkdir -m 0700 " + stage),
			t.scp(agent, agentStaged),
			t.scp(daemonPlist, plistStaged),
			t.ssh("sudo -n /bin/sh -c " + shquote.Quote(script)),
		},
		Cleanup: t.ssh("rm -rf " + stage),
	}
}

func (p *provisioner) provisionSSH(ctx context.Context, target, agent string, daemon []byte) ([]string, error) {
	t, err := parseSSHTarget(target)
	if err != nil {
		return nil, err
	}
	for _, tool := range []string{"ssh", "scp"} {
		if _, err := p.lookPath(tool); err != nil {
			return nil, fmt.Errorf("--via ssh needs the %s client on this machine: %w", tool, err)
		}
	}
	f, err := os.CreateTemp(p.tempDir, agentLabel+"-*.plist")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(daemon); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}

	plan := planSSH(t, agent, f.Name(), "/tmp/qoslab-provision-"+p.random())
	p.logf("checking login and passwordless sudo on %s", t.login())
	if _, err := p.run(ctx, plan.Check.Name, plan.Check.Args...); err != nil {
		var ce *commandError
		if errors.As(err, &ce) && ce.Code == 255 {
			return nil, fmt.Errorf("cannot log in to %s without a prompt: enable Remote Login in the guest and set up key login (`ssh-copy-id %s`): %w",
				t.login(), t.login(), err)
		}
		return nil, fmt.Errorf("%s has no passwordless sudo in the guest, which installing a LaunchDaemon needs: allow it (a NOPASSWD line via visudo), "+
			"or stop the VM and run `sudo qoslab image provision NAME`: %w", t.User, err)
	}
	for i, c := range plan.Steps {
		p.logf("%s", describeStep(c))
		if _, err := p.run(ctx, c.Name, c.Args...); err != nil {
			if i > 0 {
				// Best effort: the step's error is the one to report.
				_, _ = p.run(context.WithoutCancel(ctx), plan.Cleanup.Name, plan.Cleanup.Args...)
			}
			return nil, fmt.Errorf("provision %s: %w", t.login(), err)
		}
	}
	return []string{agentGuestPath, agentPlistGuestPath}, nil
}

// describeStep is a step for the log, without the ssh options.
func describeStep(c command) string {
	last := c.Args[len(c.Args)-1]
	if c.Name == "scp" {
		return "copying to " + last
	}
	if strings.HasPrefix(last, "sudo -n /bin/sh") {
		return "installing " + agentGuestPath + " and " + agentPlistGuestPath + ", loading " + agentLabel
	}
	return "running " + last
}

// commandError is a program that failed, with what it said.
type commandError struct {
	Cmd    string
	Code   int // exit status; -1 when it did not run or was killed
	Stderr string
	Err    error
}

func (e *commandError) Error() string {
	msg := fmt.Sprintf("%s: %v", e.Cmd, e.Err)
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

func (e *commandError) Unwrap() error { return e.Err }

// runCommand runs name and returns its stdout.
func runCommand(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...) //nolint:gosec // G204: the provisioning steps' fixed programs (hdiutil, diskutil, ssh, ...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		return out, &commandError{Cmd: command{Name: name, Args: args}.String(), Code: code, Stderr: strings.TrimSpace(stderr.String()), Err: err}
	}
	return out, nil
}

func randomHex() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
