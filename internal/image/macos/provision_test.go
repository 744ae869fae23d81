package macos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"howett.net/plist"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/hv/vz"
)

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "macos", name))
	require.NoError(t, err)
	return b
}

func TestLaunchDaemonPlist(t *testing.T) {
	b, err := launchDaemonPlist()
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(b), "<?xml"), "launchd reads XML plists; so do people")
	var got map[string]any
	format, err := plist.Unmarshal(b, &got)
	require.NoError(t, err)
	assert.Equal(t, plist.XMLFormat, format)
	assert.Equal(t, map[string]any{
		"Label":             "org.qoslab.agent",
		"ProgramArguments":  []any{"/usr/local/libexec/qoslab-agent", "--listen", "vsock:1024", "--power-off-on-shutdown"},
		"RunAtLoad":         true,
		"KeepAlive":         true,
		"ProcessType":       "Interactive",
		"StandardOutPath":   "/var/log/qoslab-agent.log",
		"StandardErrorPath": "/var/log/qoslab-agent.log",
	}, got, "no UserName: launchd runs the agent as root, so that a Shutdown request can power the guest off")
	assert.Equal(t, "--"+agent.PowerOffFlag, agentPowerOffFlag)
}

func TestDataVolumePath(t *testing.T) {
	assert.Equal(t, "usr/local/libexec/qoslab-agent", dataVolumePath(agentGuestPath))
	assert.Equal(t, "Library/LaunchDaemons/org.qoslab.agent.plist", dataVolumePath(agentPlistGuestPath))
	assert.Equal(t, "private/var/db/.AppleSetupDone", dataVolumePath(setupDoneGuestPath))
	assert.Equal(t, "variable/x", dataVolumePath("/variable/x"))
}

func TestParseAttach(t *testing.T) {
	entity := func(dev, hint string) string {
		return "<dict><key>dev-entry</key><string>" + dev + "</string><key>content-hint</key><string>" + hint + "</string></dict>"
	}
	answer := func(entities ...string) []byte {
		return []byte(`<plist version="1.0"><dict><key>system-entities</key><array>` + strings.Join(entities, "") + `</array></dict></plist>`)
	}
	for _, tc := range []struct {
		name   string
		out    []byte
		image  string
		detach []string
		bad    string
	}{
		// A macOS guest's disk: the GUID disk, its partitions, and three
		// synthesized APFS containers with their volumes.
		{name: "macOS guest disk", out: readFixture(t, "hdiutil-attach.plist"), image: "/dev/disk4", detach: []string{"/dev/disk4"}},
		{name: "one disk", out: answer(entity("/dev/disk12", "GUID_partition_scheme"), entity("/dev/disk12s1", "Apple_APFS")),
			image: "/dev/disk12", detach: []string{"/dev/disk12"}},
		{name: "another scheme", out: answer(entity("/dev/disk3", "FDisk_partition_scheme"), entity("/dev/disk4", apfsContainerScheme)),
			image: "/dev/disk3", detach: []string{"/dev/disk3"}},
		{name: "nothing", out: answer(), bad: "attached 0 disks that are not synthesized APFS containers"},
		{name: "two images", out: answer(entity("/dev/disk3", "GUID_partition_scheme"), entity("/dev/disk5", "GUID_partition_scheme"), entity("/dev/disk6", apfsContainerScheme)),
			detach: []string{"/dev/disk3", "/dev/disk5"}, bad: "attached 2 disks that are not synthesized APFS containers (/dev/disk3, /dev/disk5) among 3 whole disks"},
		{name: "only containers", out: answer(entity("/dev/disk6", apfsContainerScheme), entity("/dev/disk7", apfsContainerScheme)),
			detach: []string{"/dev/disk6", "/dev/disk7"}, bad: "attached 0 disks"},
		{name: "not a plist", out: []byte("hdiutil: attach failed - no such file"), bad: "read hdiutil's answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := parseAttach(tc.out)
			if tc.bad != "" {
				assert.ErrorContains(t, err, tc.bad)
			} else {
				assert.NoError(t, err)
			}
			assert.Equal(t, tc.image, a.Image)
			assert.Equal(t, tc.detach, a.Detach)
		})
	}
}

func TestAttachedFrom(t *testing.T) {
	dir := t.TempDir()
	disk := filepath.Join(dir, "disk.img")
	require.NoError(t, os.WriteFile(disk, nil, 0o600))
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(dir, link))
	info := bytesReplace(readFixture(t, "hdiutil-info.plist"), "GUEST_DISK_PATH", filepath.Join(link, "disk.img"))

	disks, err := attachedFrom(info, disk)
	require.NoError(t, err)
	assert.Equal(t, []string{"/dev/disk4"}, disks, "the guest's own disk, found through the symlinked path hdiutil reports; not the other image's")

	disks, err = attachedFrom(info, filepath.Join(dir, "other.img"))
	require.NoError(t, err)
	assert.Empty(t, disks)
	_, err = attachedFrom([]byte("garbage"), disk)
	assert.ErrorContains(t, err, "list of attached images")
}

func TestFindDataVolume(t *testing.T) {
	list := readFixture(t, "diskutil-apfs-list.plist")
	v, err := findDataVolume(list, "/dev/disk4")
	require.NoError(t, err)
	assert.Equal(t, "disk6s5", v.DeviceIdentifier, "the guest's Data volume, not the host's (disk3s5)")
	assert.Equal(t, "Macintosh HD - Data", v.Name)

	_, err = findDataVolume(list, "/dev/disk9")
	assert.ErrorContains(t, err, "no macOS Data volume")
	// disk4 must not match disk41's partitions.
	_, err = findDataVolume(list, "/dev/disk0")
	require.NoError(t, err)
	_, err = findDataVolume(bytesReplace(list, "disk4s2", "disk41s2"), "/dev/disk4")
	assert.ErrorContains(t, err, "no macOS Data volume")

	locked := bytesReplace(list, "<key>Locked</key>\n\t\t\t\t\t<false/>", "<key>Locked</key>\n\t\t\t\t\t<true/>")
	require.NotEqual(t, list, locked)
	_, err = findDataVolume(locked, "/dev/disk4")
	assert.ErrorContains(t, err, "FileVault")
}

func bytesReplace(b []byte, old, new string) []byte {
	return []byte(strings.ReplaceAll(string(b), old, new))
}

// fakeSystem answers for hdiutil, diskutil, ssh and scp, recording what ran.
type fakeSystem struct {
	t     *testing.T
	ran   []command
	fail  map[string]error // by the command's first two words
	mount func(mp string)  // fills the "mounted" volume
	owned []string         // paths chown was called on
	// attach, when set, is what `hdiutil attach` prints instead of the
	// fixture; attached is the image `hdiutil info` lists as attached
	// (the fixture's guest entry), "" for none.
	attach   []byte
	attached string
	// apfs, when set, is what `diskutil apfs list` prints.
	apfs []byte
}

func (f *fakeSystem) run(_ context.Context, name string, args ...string) ([]byte, error) {
	c := command{Name: name, Args: args}
	f.ran = append(f.ran, c)
	key := name
	if len(args) > 0 {
		key += " " + args[0]
	}
	if err := f.fail[key]; err != nil {
		if key == "hdiutil attach" && f.attach != nil {
			return f.attach, err
		}
		return nil, err
	}
	switch key {
	case "hdiutil attach":
		if f.attach != nil {
			return f.attach, nil
		}
		return readFixture(f.t, "hdiutil-attach.plist"), nil
	case "hdiutil info":
		path := f.attached
		if path == "" {
			path = "/nowhere/else.img"
		}
		return bytesReplace(readFixture(f.t, "hdiutil-info.plist"), "GUEST_DISK_PATH", path), nil
	case "diskutil apfs":
		if f.apfs != nil {
			return f.apfs, nil
		}
		return readFixture(f.t, "diskutil-apfs-list.plist"), nil
	case "diskutil mount":
		if f.mount != nil {
			f.mount(args[2])
		}
	}
	return nil, nil
}

func (f *fakeSystem) provisioner(t *testing.T, goos string, euid int) *provisioner {
	return &provisioner{
		goos:       goos,
		geteuid:    func() int { return euid },
		lookPath:   func(s string) (string, error) { return "/usr/bin/" + s, nil },
		run:        f.run,
		lockBundle: lockBundle,
		chown: func(file *os.File, uid, gid int) error {
			require.Equal(t, 0, uid)
			require.Equal(t, 0, gid)
			f.owned = append(f.owned, file.Name())
			return nil
		},
		tempDir:    t.TempDir(),
		random:     func() string { return "0123abcd" },
		checkAgent: func(p string) (AgentBinary, error) { return AgentBinary{Path: p, SHA256: "feed"}, nil },
	}
}

// testBundle is a small bundle made as hv/vz makes them.
func testBundle(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "guest")
	_, err := vz.CreateBundle(context.Background(), dir, vz.NewBundle{
		Config:            vz.BundleConfig{Kind: vz.GuestMacOS, CPUs: 2, MemoryMiB: 4096, DiskBytes: 64 << 20},
		HardwareModel:     []byte("hardware model"),
		MachineIdentifier: []byte("machine identifier"),
		Populate: func(_ context.Context, b *vz.Bundle) error {
			return os.WriteFile(b.Path(vz.AuxFile), []byte("aux"), 0o600)
		},
	})
	require.NoError(t, err)
	return dir
}

func testAgent(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "qoslab-agent")
	require.NoError(t, os.WriteFile(p, []byte("agent bytes"), 0o755))
	return p
}

// mountPoint is the directory provisioning mounted the guest's volume on.
func mountPoint(t *testing.T, ran []command) string {
	for _, c := range ran {
		if c.Name == "diskutil" && c.Args[0] == "mount" {
			return c.Args[2]
		}
	}
	t.Fatal("nothing was mounted")
	return ""
}

func TestProvisionOffline(t *testing.T) {
	fs := &fakeSystem{t: t}
	p := fs.provisioner(t, "darwin", 0)
	bundle, agent := testBundle(t), testAgent(t)

	res, err := p.provision(context.Background(), ProvisionOptions{Bundle: bundle, Agent: agent})
	require.NoError(t, err)
	assert.Equal(t, viaOffline, res.Via)
	assert.Equal(t, []string{agentGuestPath, agentPlistGuestPath, setupDoneGuestPath}, res.Files)

	mp := mountPoint(t, fs.ran)
	var got []string
	for _, c := range fs.ran {
		got = append(got, c.String())
	}
	assert.Equal(t, []string{
		"hdiutil attach -imagekey diskimage-class=CRawDiskImage -nomount -noverify -noautofsck -nobrowse -noautoopen -owners on -plist " + filepath.Join(bundle, "disk.img"),
		"diskutil apfs list -plist",
		"diskutil mount -mountPoint " + mp + " disk6s5",
		"diskutil enableOwnership " + mp,
		"diskutil unmount " + mp,
		"hdiutil detach /dev/disk4",
	}, got)

	for _, f := range []struct {
		rel     string
		mode    os.FileMode
		content string
	}{
		{"usr/local/libexec/qoslab-agent", 0o755, "agent bytes"},
		{"Library/LaunchDaemons/org.qoslab.agent.plist", 0o644, ""},
		{"private/var/db/.AppleSetupDone", 0o644, ""},
	} {
		fi, err := os.Stat(filepath.Join(mp, f.rel))
		require.NoError(t, err, f.rel)
		assert.Equal(t, f.mode, fi.Mode().Perm(), f.rel)
		b, err := os.ReadFile(filepath.Join(mp, f.rel))
		require.NoError(t, err)
		if f.content != "" {
			assert.Equal(t, f.content, string(b))
		}
	}
	daemon, err := os.ReadFile(filepath.Join(mp, "Library/LaunchDaemons/org.qoslab.agent.plist"))
	require.NoError(t, err)
	want, err := launchDaemonPlist()
	require.NoError(t, err)
	assert.Equal(t, want, daemon)
	// Every file and every directory made was given to root:wheel.
	var owned []string
	for _, o := range fs.owned {
		rel, err := filepath.Rel(mp, o)
		require.NoError(t, err)
		owned = append(owned, rel)
	}
	assert.ElementsMatch(t, []string{
		"usr", "usr/local", "usr/local/libexec", "usr/local/libexec/qoslab-agent",
		"Library", "Library/LaunchDaemons", "Library/LaunchDaemons/org.qoslab.agent.plist",
		"private", "private/var", "private/var/db", "private/var/db/.AppleSetupDone",
	}, owned)
}

func TestProvisionOfflineKeepsTheGuestsFiles(t *testing.T) {
	fs := &fakeSystem{t: t}
	fs.mount = func(mp string) {
		require.NoError(t, os.MkdirAll(filepath.Join(mp, "private/var/db"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(mp, "private/var/db/.AppleSetupDone"), []byte("setup ran"), 0o600))
	}
	p := fs.provisioner(t, "darwin", 0)
	res, err := p.provision(context.Background(), ProvisionOptions{Bundle: testBundle(t), Agent: testAgent(t)})
	require.NoError(t, err)
	assert.NotContains(t, res.Files, setupDoneGuestPath)
	b, err := os.ReadFile(filepath.Join(mountPoint(t, fs.ran), "private/var/db/.AppleSetupDone"))
	require.NoError(t, err)
	assert.Equal(t, "setup ran", string(b))
}

func TestProvisionOfflineStaysInsideTheGuest(t *testing.T) {
	outside := t.TempDir()
	fs := &fakeSystem{t: t}
	fs.mount = func(mp string) {
		// A hostile guest: its /usr/local points at the host.
		require.NoError(t, os.MkdirAll(filepath.Join(mp, "usr"), 0o755))
		require.NoError(t, os.Symlink(outside, filepath.Join(mp, "usr/local")))
	}
	p := fs.provisioner(t, "darwin", 0)
	_, err := p.provision(context.Background(), ProvisionOptions{Bundle: testBundle(t), Agent: testAgent(t)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "guest /usr/local/libexec")
	assert.Contains(t, err.Error(), "path escapes from parent")
	ents, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, ents, "nothing was written outside the guest's volume")
	last := fs.ran[len(fs.ran)-2:]
	assert.Equal(t, "diskutil unmount", last[0].Name+" "+last[0].Args[0], "a failure still unmounts")
	assert.Equal(t, "hdiutil detach /dev/disk4", last[1].String(), "and detaches")
}

func TestProvisionOfflineRefusesUpFront(t *testing.T) {
	damaged := testBundle(t)
	require.NoError(t, os.Remove(filepath.Join(damaged, vz.AuxFile)))

	for _, tc := range []struct {
		name   string
		goos   string
		euid   int
		bundle func(t *testing.T) string
		agent  error
		want   []string
	}{
		{"not a Mac", "linux", 0, testBundle, nil, []string{"runs on the Mac", "--via ssh USER@ADDR"}},
		{"not root", "darwin", 501, testBundle, nil, []string{"needs root", "sudo qoslab image provision NAME"}},
		{"bad agent", "darwin", 0, testBundle, errors.New("agent binary x is built for amd64"), []string{"amd64"}},
		{"damaged bundle", "darwin", 0, func(*testing.T) string { return damaged }, nil, []string{"aux.img"}},
		{"no bundle", "darwin", 0, func(t *testing.T) string { return filepath.Join(t.TempDir(), "none") }, nil, []string{"no VM bundle"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := &fakeSystem{t: t}
			p := fs.provisioner(t, tc.goos, tc.euid)
			if tc.agent != nil {
				p.checkAgent = func(string) (AgentBinary, error) { return AgentBinary{}, tc.agent }
			}
			_, err := p.provision(context.Background(), ProvisionOptions{Bundle: tc.bundle(t), Agent: testAgent(t)})
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Empty(t, fs.ran, "nothing ran")
		})
	}
}

func TestProvisionOfflineRefusesARunningVM(t *testing.T) {
	bundle := testBundle(t)
	unlock, err := lockBundle(bundle) // as hv/vz holds it while the VM runs
	require.NoError(t, err)
	defer unlock()

	fs := &fakeSystem{t: t}
	_, err = fs.provisioner(t, "darwin", 0).provision(context.Background(), ProvisionOptions{Bundle: bundle, Agent: testAgent(t)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "in use by a running VM")
	assert.Empty(t, fs.ran)
}

func TestProvisionOfflineDetachesAfterAFailedMount(t *testing.T) {
	fs := &fakeSystem{t: t, fail: map[string]error{"diskutil mount": errors.New("mount failed")}}
	_, err := fs.provisioner(t, "darwin", 0).provision(context.Background(), ProvisionOptions{Bundle: testBundle(t), Agent: testAgent(t)})
	require.ErrorContains(t, err, "mount failed")
	last := fs.ran[len(fs.ran)-1]
	assert.Equal(t, "hdiutil detach /dev/disk4", last.String())
	for _, c := range fs.ran {
		assert.NotEqual(t, "unmount", c.Args[0], "nothing to unmount")
	}
}

// A disk left attached keeps the VM from booting: every way provisioning
// can fail after `hdiutil attach` ran detaches what the attach made (and
// unmounts what it mounted).
func TestProvisionOfflineDetachesOnEveryPath(t *testing.T) {
	twoImages := []byte(`<plist version="1.0"><dict><key>system-entities</key><array>` +
		`<dict><key>dev-entry</key><string>/dev/disk4</string><key>content-hint</key><string>GUID_partition_scheme</string></dict>` +
		`<dict><key>dev-entry</key><string>/dev/disk8</string><key>content-hint</key><string>GUID_partition_scheme</string></dict>` +
		`</array></dict></plist>`)
	noGuest := bytesReplace(readFixture(t, "diskutil-apfs-list.plist"), "disk4s", "disk40s")
	for _, tc := range []struct {
		name     string
		fail     map[string]error
		attach   []byte
		attached bool // hdiutil info lists the guest's disk as attached
		apfs     []byte
		want     string   // in the error
		tail     []string // the last commands run
	}{
		{name: "attach fails after attaching", fail: map[string]error{"hdiutil attach": errors.New("exit status 1")}, attached: true,
			want: "attach the guest disk", tail: []string{"hdiutil info -plist", "hdiutil detach /dev/disk4"}},
		{name: "attach fails, nothing attached", fail: map[string]error{"hdiutil attach": errors.New("exit status 1")},
			want: "attach the guest disk", tail: []string{"hdiutil info -plist"}},
		{name: "attach answer unreadable", attach: []byte("hdiutil: attach: Resource busy"), attached: true,
			want: "read hdiutil's answer", tail: []string{"hdiutil info -plist", "hdiutil detach /dev/disk4"}},
		{name: "two images in the answer", attach: twoImages,
			want: "attached 2 disks", tail: []string{"hdiutil detach /dev/disk4", "hdiutil detach /dev/disk8"}},
		{name: "APFS list fails", fail: map[string]error{"diskutil apfs": errors.New("diskutil crashed")},
			want: "list APFS volumes", tail: []string{"diskutil apfs list -plist", "hdiutil detach /dev/disk4"}},
		{name: "no Data volume", apfs: noGuest,
			want: "no macOS Data volume", tail: []string{"diskutil apfs list -plist", "hdiutil detach /dev/disk4"}},
		{name: "mount fails", fail: map[string]error{"diskutil mount": errors.New("mount failed")},
			want: "mount failed", tail: []string{"hdiutil detach /dev/disk4"}},
		{name: "ownership fails", fail: map[string]error{"diskutil enableOwnership": errors.New("not permitted")},
			want: "enable ownership", tail: []string{"diskutil unmount MP", "hdiutil detach /dev/disk4"}},
		{name: "detach fails", fail: map[string]error{"hdiutil detach": errors.New("Resource busy")},
			want: "hdiutil detach -force /dev/disk4", tail: []string{"hdiutil detach /dev/disk4", "hdiutil detach -force /dev/disk4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bundle := testBundle(t)
			fs := &fakeSystem{t: t, fail: tc.fail, attach: tc.attach, apfs: tc.apfs}
			if tc.attached {
				fs.attached = filepath.Join(bundle, vz.DiskFile)
			}
			_, err := fs.provisioner(t, "darwin", 0).provision(context.Background(), ProvisionOptions{Bundle: bundle, Agent: testAgent(t)})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)

			var ran []string
			mounted := 0
			for _, c := range fs.ran {
				line := c.String()
				if c.Name == "diskutil" && c.Args[0] == "mount" && tc.fail["diskutil mount"] == nil {
					mounted++
				}
				if c.Name == "diskutil" && c.Args[0] == "unmount" {
					mounted--
					line = "diskutil unmount MP"
				}
				ran = append(ran, line)
			}
			require.GreaterOrEqual(t, len(ran), len(tc.tail), "%q", ran)
			assert.Equal(t, tc.tail, ran[len(ran)-len(tc.tail):], "%q", ran)
			assert.Zero(t, mounted, "what was mounted is unmounted")
		})
	}
}

func TestParseSSHTarget(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want sshTarget
		bad  string
	}{
		{in: "admin@192.168.64.5", want: sshTarget{User: "admin", Host: "192.168.64.5"}},
		{in: "admin@guest.local:2222", want: sshTarget{User: "admin", Host: "guest.local", Port: "2222"}},
		{in: "admin@[fe80::1]:22", want: sshTarget{User: "admin", Host: "fe80::1", Port: "22"}},
		{in: "admin@fe80::1", want: sshTarget{User: "admin", Host: "fe80::1"}},
		{in: "192.168.64.5", bad: "want USER@HOST"},
		{in: "@host", bad: "want USER@HOST"},
		{in: "admin@", bad: "want USER@HOST"},
		{in: "-oProxyCommand=x@host", bad: "is not a user, host or port"},
		{in: "admin@host;reboot", bad: "is not a user, host or port"},
		{in: "admin@host:99999", bad: "not 1..65535"},
		{in: "admin@host:22x", bad: "not 1..65535"},
	} {
		got, err := parseSSHTarget(tc.in)
		if tc.bad != "" {
			assert.ErrorContains(t, err, tc.bad, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
	v6, _ := parseSSHTarget("admin@[fe80::1]:22")
	assert.Equal(t, "admin@[fe80::1]:/tmp/x", v6.remote("/tmp/x"))
	assert.Equal(t, "admin@fe80::1", v6.login())
}

func TestPlanSSH(t *testing.T) {
	target, err := parseSSHTarget("admin@10.0.0.2:2222")
	require.NoError(t, err)
	plan := planSSH(target, "/build/qoslab-agent", "/tmp/d.plist", "/tmp/qoslab-provision-0123abcd")
	opts := "-o BatchMode=yes -o ConnectTimeout=15 -o StrictHostKeyChecking=accept-new -o ServerAliveInterval=15"
	assert.Equal(t, "ssh "+opts+" -p 2222 admin@10.0.0.2 sudo -n true", plan.Check.String())
	require.Len(t, plan.Steps, 4)
	assert.Equal(t, "ssh "+opts+" -p 2222 admin@10.0.0.2 mkdir -m 0700 /tmp/qoslab-provision-0123abcd", plan.Steps[0].String())
	assert.Equal(t, "scp "+opts+" -P 2222 /build/qoslab-agent admin@10.0.0.2:/tmp/qoslab-provision-0123abcd/qoslab-agent", plan.Steps[1].String())
	assert.Equal(t, "scp "+opts+" -P 2222 /tmp/d.plist admin@10.0.0.2:/tmp/qoslab-provision-0123abcd/org.qoslab.agent.plist", plan.Steps[2].String())
	install := plan.Steps[3].Args[len(plan.Steps[3].Args)-1]
	assert.True(t, strings.HasPrefix(install, "sudo -n /bin/sh -c '"), install)
	for _, want := range []string{
		"install -o root -g wheel -m 0755 /tmp/qoslab-provision-0123abcd/qoslab-agent /usr/local/libexec/qoslab-agent",
		"install -o root -g wheel -m 0644 /tmp/qoslab-provision-0123abcd/org.qoslab.agent.plist /Library/LaunchDaemons/org.qoslab.agent.plist",
		"launchctl bootstrap system /Library/LaunchDaemons/org.qoslab.agent.plist",
		"rm -rf /tmp/qoslab-provision-0123abcd",
	} {
		assert.Contains(t, install, want)
	}
	assert.Equal(t, "ssh "+opts+" -p 2222 admin@10.0.0.2 rm -rf /tmp/qoslab-provision-0123abcd", plan.Cleanup.String())
	for _, c := range append([]command{plan.Check, plan.Cleanup}, plan.Steps...) {
		assert.Contains(t, c.Args, "BatchMode=yes", "nothing may wait for a password")
	}
}

func TestProvisionSSH(t *testing.T) {
	fs := &fakeSystem{t: t}
	p := fs.provisioner(t, "linux", 1000) // neither a Mac nor root is needed
	res, err := p.provision(context.Background(), ProvisionOptions{SSH: "admin@10.0.0.2", Agent: "/build/qoslab-agent"})
	require.NoError(t, err)
	assert.Equal(t, viaSSH, res.Via)
	assert.Equal(t, []string{agentGuestPath, agentPlistGuestPath}, res.Files)
	require.Len(t, fs.ran, 5)
	assert.Equal(t, "sudo -n true", fs.ran[0].Args[len(fs.ran[0].Args)-1], "privilege is checked before anything is copied")
	staged := fs.ran[3].Args[len(fs.ran[3].Args)-2]
	assert.NoFileExists(t, staged, "the local copy of the plist is removed")
}

func TestProvisionSSHFailures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		failOn  string
		err     error
		want    string
		ran     int
		cleanup bool
	}{
		{"no key login", "ssh -o", &commandError{Cmd: "ssh", Code: 255, Err: errors.New("exit status 255"), Stderr: "Permission denied (publickey)"},
			"cannot log in to admin@10.0.0.2 without a prompt", 1, false},
		{"no passwordless sudo", "ssh -o", &commandError{Cmd: "ssh", Code: 1, Err: errors.New("exit status 1"), Stderr: "sudo: a password is required"},
			"has no passwordless sudo", 1, false},
		{"copy fails", "scp -o", errors.New("scp: disk full"), "disk full", 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := &fakeSystem{t: t, fail: map[string]error{tc.failOn: tc.err}}
			_, err := fs.provisioner(t, "linux", 1000).provision(context.Background(), ProvisionOptions{SSH: "admin@10.0.0.2", Agent: "/a"})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			if tc.failOn == "ssh -o" {
				// The check is the first ssh; fail only it by failing every ssh.
				assert.Len(t, fs.ran, tc.ran)
				return
			}
			require.Len(t, fs.ran, tc.ran)
			assert.Equal(t, tc.cleanup, strings.HasSuffix(fs.ran[len(fs.ran)-1].String(), "rm -rf /tmp/qoslab-provision-0123abcd"))
		})
	}
}

func TestProvisionSSHNeedsTheClients(t *testing.T) {
	fs := &fakeSystem{t: t}
	p := fs.provisioner(t, "linux", 1000)
	p.lookPath = func(s string) (string, error) {
		if s == "scp" {
			return "", fmt.Errorf("exec: %q: executable file not found in $PATH", s)
		}
		return "/usr/bin/" + s, nil
	}
	_, err := p.provision(context.Background(), ProvisionOptions{SSH: "admin@10.0.0.2", Agent: "/a"})
	require.ErrorContains(t, err, "needs the scp client")
	assert.Empty(t, fs.ran)
}

// fakeHdiutil puts an hdiutil on PATH (and a diskutil, which provisioning
// looks for first) that answers attach as hdiutil does on a disk it has
// doubts about: it asks, reads the answer from stdin, and refuses without
// a yes. Every call's arguments, and what stdin gave, go to the returned
// log.
func fakeHdiutil(t *testing.T, attach string) (calls string) {
	t.Helper()
	dir := t.TempDir()
	calls = filepath.Join(dir, "calls")
	script := `#!/bin/sh
log="$(dirname "$0")/calls"
echo "$(basename "$0") $*" >>"$log"
case "$1" in
attach)
` + attach + `
	;;
info)
	printf '<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict><key>images</key><array/></dict></plist>\n'
	;;
esac
exit 0
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hdiutil"), []byte(script), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "diskutil"), []byte("#!/bin/sh\nexit 0\n"), 0o755))
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return calls
}

// hdiutil's question on a raw disk it doubts ("There may be a problem with
// this disk image", as UTM users have seen it): the attach flags leave it
// nothing to verify or check, and when it asks anyway, nobody answers (its
// stdin is /dev/null) and the error quotes what it said and names the way
// that needs no attach.
func TestProvisionOfflineAttachCannotBePrompted(t *testing.T) {
	for _, tc := range []struct {
		name   string
		attach string
		want   []string
	}{
		{name: "hdiutil asks", attach: `	printf 'There may be a problem with this disk image. Attach? (Y/N) '
	if read -r answer; then echo "stdin: $answer" >>"$log"; else echo "stdin: end of file" >>"$log"; fi
	[ "$answer" = Y ] && exit 0
	echo "hdiutil: attach canceled" >&2
	exit 1`, want: []string{
			`hdiutil asked a question qoslab cannot answer`,
			`"There may be a problem with this disk image. Attach? (Y/N)\nhdiutil: attach canceled"`,
		}},
		{name: "hdiutil refuses", attach: `	echo "hdiutil: attach failed - Resource busy" >&2
	exit 1`, want: []string{
			`exit status 1: hdiutil: attach failed - Resource busy`,
		}},
		{name: "hdiutil answers no plist", attach: `	echo "/dev/disk4  GUID_partition_scheme"`, want: []string{
			`read hdiutil's answer`,
			`hdiutil printed "/dev/disk4  GUID_partition_scheme"`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := fakeHdiutil(t, tc.attach)
			bundle := testBundle(t)
			fs := &fakeSystem{t: t}
			p := fs.provisioner(t, "darwin", 0)
			p.run, p.lookPath = runCommand, exec.LookPath
			_, err := p.provision(context.Background(), ProvisionOptions{Bundle: bundle, Agent: testAgent(t)})
			require.Error(t, err)
			for _, w := range append(tc.want,
				"attach the guest disk "+filepath.Join(bundle, vz.DiskFile),
				"`qoslab image provision guest --via ssh USER@ADDR`") {
				assert.Contains(t, err.Error(), w)
			}

			log, rerr := os.ReadFile(calls)
			require.NoError(t, rerr)
			lines := strings.Split(strings.TrimSpace(string(log)), "\n")
			require.NotEmpty(t, lines)
			assert.Equal(t, "hdiutil "+strings.Join(attachArgs(filepath.Join(bundle, vz.DiskFile)), " "), lines[0])
			for _, flag := range []string{"-noverify", "-noautofsck", "-nobrowse", "-owners on", "-nomount", "-plist"} {
				assert.Contains(t, lines[0], " "+flag+" ")
			}
			if tc.name == "hdiutil asks" {
				assert.Contains(t, lines, "stdin: end of file", "nobody answered: hdiutil read an empty stdin")
			}
			assert.Equal(t, "hdiutil info -plist", lines[len(lines)-1], "what the failed attach left is looked for")
		})
	}
}
