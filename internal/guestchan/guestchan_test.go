package guestchan

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every value here is written once in the module's Go code: the image, the
// guest's init and the backends all name it through this package, so no
// test needs to keep copies equal.
func TestValuesAreWrittenOnce(t *testing.T) {
	values := []string{strconv.Quote(PortName), strconv.Quote(ConfigPath), strconv.Quote(ScratchDisk)}
	found := map[string][]string{}
	root := filepath.Join("..", "..")
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, v := range values {
			if strings.Contains(string(b), v) {
				found[v] = append(found[v], path)
			}
		}
		return nil
	}))
	for _, v := range values {
		assert.Equal(t, []string{"guestchan.go"}, base(found[v]), "%s is written in %v", v, found[v])
	}
}

func base(paths []string) []string {
	var out []string
	for _, p := range paths {
		out = append(out, filepath.Base(p))
	}
	return out
}

func TestVZLinuxCmdline(t *testing.T) {
	tests := []struct {
		name, image, want string
	}{
		{"the image's UART console is dropped", "quiet panic=-1 cryptomgr.notests console=ttyAMA0",
			"quiet panic=-1 cryptomgr.notests console=hvc0 qoslab.listen=vsock:1024"},
		{"every console= and an earlier listen list go", "console=ttyS0 quiet console=tty0 qoslab.listen=virtio-port:x",
			"quiet console=hvc0 qoslab.listen=vsock:1024"},
		{"an empty image command line", "", "console=hvc0 qoslab.listen=vsock:1024"},
		{"parameters that only start like console stay", "consoleblank=0 earlycon", "consoleblank=0 earlycon console=hvc0 qoslab.listen=vsock:1024"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := VZLinuxCmdline(tt.image)
			assert.Equal(t, tt.want, got)
			assert.NotContains(t, got, "ttyAMA0", "vz has no UART")
			listen, ok := ListenFromCmdline(got)
			require.True(t, ok)
			assert.Equal(t, []string{"vsock:1024"}, listen, "the guest learns its one channel")
		})
	}
}

func TestListenFromCmdline(t *testing.T) {
	tests := []struct {
		name    string
		cmdline string
		want    []string
		found   bool
	}{
		{"none", "quiet console=hvc0", nil, false},
		{"one", "quiet qoslab.listen=vsock:1024 panic=-1", []string{"vsock:1024"}, true},
		{"several", "qoslab.listen=virtio-port:org.qoslab.agent,vsock:1024", []string{"virtio-port:org.qoslab.agent", "vsock:1024"}, true},
		{"the last counts", "qoslab.listen=vsock:1 qoslab.listen=vsock:2", []string{"vsock:2"}, true},
		{"empty entries are skipped", "qoslab.listen=,vsock:1024,", []string{"vsock:1024"}, true},
		{"given but empty", "qoslab.listen=", nil, true},
		{"a longer name is another parameter", "qoslab.listener=vsock:1", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found := ListenFromCmdline(tt.cmdline)
			assert.Equal(t, tt.found, found)
			assert.Equal(t, tt.want, got)
		})
	}
}
