package procsched

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// statLine is a /proc/self/stat line with the given command, nice and policy.
func statLine(comm string, nice, policy int) string {
	f := make([]string, 52)
	for i := range f {
		f[i] = "0"
	}
	f[0], f[1], f[2] = "4242", "("+comm+")", "S"
	f[18] = strconv.Itoa(nice)
	f[40] = strconv.Itoa(policy)
	return strings.Join(f, " ") + "\n"
}

// tree writes files (path relative to root: content) under a new root.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
	}
	return root
}

const (
	mountsV2 = "31 23 0:28 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n"
	mountsV1 = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n" +
		"32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n" +
		"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
)

func TestReadLinux(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  Scheduling
	}{
		{
			name: "default",
			files: map[string]string{
				"proc/self/stat":                                   statLine("qoslab", 0, 0),
				"proc/self/cgroup":                                 "0::/user.slice/session-1.scope\n",
				"proc/self/mountinfo":                              mountsV2,
				"sys/fs/cgroup/user.slice/cpu.max":                 "max 100000\n",
				"sys/fs/cgroup/user.slice/session-1.scope/cpu.max": "max 100000\n",
			},
			want: Scheduling{Policy: "SCHED_OTHER"},
		},
		{
			name: "nice 10, a command with spaces and parentheses",
			files: map[string]string{
				"proc/self/stat":      statLine("q (o) slab", 10, 0),
				"proc/self/cgroup":    "0::/\n",
				"proc/self/mountinfo": mountsV2,
			},
			want: Scheduling{Policy: "SCHED_OTHER", Nice: 10},
		},
		{
			name: "chrt -b, and the tightest of two v2 limits",
			files: map[string]string{
				"proc/self/stat":            statLine("qoslab", 0, 3),
				"proc/self/cgroup":          "0::/a/b\n",
				"proc/self/mountinfo":       mountsV2,
				"sys/fs/cgroup/a/cpu.max":   "50000 100000\n",
				"sys/fs/cgroup/a/b/cpu.max": "150000 100000\n",
			},
			want: Scheduling{Policy: "SCHED_BATCH", CPULimit: &CPULimit{Cgroup: "/a", Setting: "cpu.max 50000 100000", CPUs: 0.5}},
		},
		{
			name: "v1 cpu controller beside a v2 hierarchy without it",
			files: map[string]string{
				"proc/self/stat":      statLine("qoslab", -5, 0),
				"proc/self/cgroup":    "4:memory:/m\n2:cpu,cpuacct:/docker/abc\n0::/\n",
				"proc/self/mountinfo": mountsV1,
				"sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us":  "200000\n",
				"sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000\n",
				"sys/fs/cgroup/cpu,cpuacct/docker/cpu.cfs_quota_us":      "-1\n",
				"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us":             "-1\n",
			},
			want: Scheduling{Policy: "SCHED_OTHER", Nice: -5, CPULimit: &CPULimit{Cgroup: "/docker/abc", Setting: "cpu.cfs_quota_us 200000, cpu.cfs_period_us 100000", CPUs: 2}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := readLinux(tree(t, tc.files))
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestReadLinuxSaysWhatItCouldNotRead(t *testing.T) {
	root := tree(t, map[string]string{
		"proc/self/stat":          "garbage",
		"proc/self/cgroup":        "0::/a\n",
		"proc/self/mountinfo":     mountsV2,
		"sys/fs/cgroup/a/cpu.max": "lots\n",
	})
	s := readLinux(root)
	require.Len(t, s.Unread, 2)
	assert.Contains(t, s.Unread[0], "policy and nice: /proc/self/stat has no command field")
	assert.Contains(t, s.Unread[1], `cpu.max: "lots\n" is not QUOTA PERIOD`)
}

func TestWarnings(t *testing.T) {
	assert.Empty(t, Scheduling{Policy: "SCHED_OTHER"}.Warnings())
	assert.True(t, Scheduling{Policy: "SCHED_OTHER"}.IsDefault())

	s := Scheduling{Policy: "SCHED_OTHER", Nice: 10, CPULimit: &CPULimit{Cgroup: "/a", Setting: "cpu.max 50000 100000", CPUs: 0.5}}
	assert.False(t, s.IsDefault())
	assert.Equal(t, "SCHED_OTHER nice=10, cgroup /a limits it to 0.5 CPUs (cpu.max 50000 100000)", s.Text())
	w := s.Warnings()
	require.Len(t, w, 2)
	assert.Contains(t, w[0], "qoslab itself runs at nice 10, not the default (SCHED_OTHER, nice 0)")
	assert.Contains(t, w[1], "cgroup /a, which limits it to 0.5 CPUs (cpu.max 50000 100000)")

	w = Scheduling{Policy: "SCHED_BATCH"}.Warnings()
	require.Len(t, w, 1)
	assert.Contains(t, w[0], "runs at SCHED_BATCH, nice 0")
}

func TestUnescape(t *testing.T) {
	assert.Equal(t, "/mnt/a b\\c", unescape(`/mnt/a\040b\134c`))
	assert.Equal(t, `/x\0`, unescape(`/x\0`))
}
