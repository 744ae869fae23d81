//go:build linux

package qemu

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/image"
	"github.com/qoslab/qoslab/internal/testvm"
)

// The power button powers the Linux guest off: QMP's system_powerdown is
// what a host's request to stop is (Virtualization.framework's
// requestStop presses the same button), and the guest's init must answer
// it, whichever way the kernel presents the button: the ACPI power button
// on amd64's q35, gpio-keys on arm64's virt (a PL061 GPIO line, as there
// is no ACPI without firmware), in QEMU's own model and in the vz model.
// These boot the real Debian kernel and the agent under TCG.
func TestPowerButtonPowersTheGuestOff(t *testing.T) {
	tests := []struct {
		name   string
		arch   string
		model  string
		button string // the device init names
	}{
		{"amd64 q35, ACPI power button", "amd64", "", "(Power Button)"},
		{"arm64 virt, gpio-keys", "arm64", "", "(gpio-keys)"},
		{"arm64 in the vz model, gpio-keys", "arm64", hv.ModelVZ, "(gpio-keys)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img := guestImage(t, tt.arch)
			if tt.model == hv.ModelVZ {
				requireVZModel(t)
			}
			spec := hv.Spec{Name: "pwr", Image: img, CPUs: 1, MemoryMiB: 512, Accel: AccelTCG, Model: tt.model,
				StateDir: shortTempDir(t), Ready: agentAnswers}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			m, err := New(Options{CacheDir: t.TempDir(), VhostVsockDirs: testvm.VhostVsockDirs()}).Start(ctx, spec)
			require.NoError(t, err)
			t.Cleanup(func() { _ = m.Stop(context.Background()) })
			pressed := time.Now()
			require.NoError(t, PressPowerButton(ctx, m))
			select {
			case <-m.Done():
			case <-time.After(2 * time.Minute):
				t.Fatalf("the guest did not power off after system_powerdown; console:\n%s", readFile(m.Info().ConsoleLog))
			}
			t.Logf("%s: system_powerdown -> QEMU ended in %.2f s", tt.name, time.Since(pressed).Seconds())
			assert.NoError(t, m.Err(), "the guest shut down by itself (QEMU: guest-shutdown), not killed")
			console := readFile(m.Info().ConsoleLog)
			// Every device with KEY_POWER is watched (q35's AT keyboard has it too).
			assert.Regexp(t, regexp.MustCompile(`qoslab-agent: power button: .*/dev/input/event\d+ `+regexp.QuoteMeta(tt.button)), console)
			assert.Contains(t, console, "pressed: stopping the agent, then powering off")
			assert.Contains(t, console, "qoslab-agent: powering off")
		})
	}
}

// agentAnswers is a Ready that waits for the agent's Info.
func agentAnswers(ctx context.Context, m hv.Machine) error {
	c, err := agent.NewClient(func(ctx context.Context) (net.Conn, error) { return m.DialAgent(ctx) })
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Info(ctx)
	return err
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// guestImage builds the built-in recipe's image for arch, with this
// checkout's agent, from the Debian kernel setup fetched. It skips (or,
// with QOSLAB_REQUIRE_VM=1 as CI sets, fails) without QEMU or the kernel.
func guestImage(t *testing.T, arch string) hv.Image {
	t.Helper()
	testvm.Slow(t, "boots a real guest")
	emulator := map[string]string{"amd64": "qemu-system-x86_64", "arm64": "qemu-system-aarch64"}[arch]
	if _, err := exec.LookPath(emulator); err != nil {
		vmMissing(t, "no "+emulator)
	}
	kernels, err := image.DefaultKernelCacheDir(os.Getenv)
	require.NoError(t, err)
	if _, err := image.LocateKernel(image.DefaultRecipe(), image.LocateOptions{Arch: arch, KernelCacheDir: kernels}); err != nil {
		vmMissing(t, "no "+arch+" Debian kernel: "+err.Error())
	}
	dir := t.TempDir()
	agentBin := filepath.Join(dir, "qoslab-agent")
	build := exec.Command("go", "build", "-o", agentBin, "../../../guest/agent")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build the %s agent: %s", arch, out)
	store := filepath.Join(dir, "images")
	_, err = image.Build(context.Background(), image.BuildOptions{
		Recipe: image.DefaultRecipe(), Arch: arch, AgentPath: agentBin, StoreDir: store, KernelCacheDir: kernels,
	})
	require.NoError(t, err)
	img, _, err := image.Load(store, image.DefaultRecipe().ImageName(arch))
	require.NoError(t, err)
	if arch != runtime.GOARCH {
		t.Logf("%s guest emulated on %s", arch, runtime.GOARCH)
	}
	return img
}
