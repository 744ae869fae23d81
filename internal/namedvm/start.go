package namedvm

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/guestvm"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/hv/registry"
	"github.com/qoslab/qoslab/internal/spec"
)

// SizedFor is the spec a named VM is sized for when its memory or disk
// is not given: the built-in subsumption experiment, the largest the
// built-in specs ask of a VM.
const SizedFor = "subsumption"

// VM is a VM that outlives the command that starts it.
type VM struct {
	Name string
	// VM is what to boot; zero memory and disk are sized for SizedFor.
	VM  spec.VMSpec
	Env guestvm.Env
}

// For is where env keeps named VMs: under its StateHome, attached
// through its backends.
func For(env guestvm.Env) Store { return Store{Home: env.StateHome, Registry: env.Registry()} }

// Start boots a named VM and leaves it running; its state lives in the
// env's StateHome. It refuses a name that is running already.
func Start(ctx context.Context, n VM, log io.Writer) (hv.Machine, *agentpb.InfoReply, error) {
	store := For(n.Env)
	dir := store.Dir(n.Name)
	if m, err := store.Attach(ctx, n.Name); err == nil {
		return nil, nil, fmt.Errorf("vm %s is already running (pid %d); stop it first with `qoslab vm stop %s`", n.Name, m.Info().PID, n.Name)
	}
	v, notes := guestvm.Fit(n.VM, n.Env)
	if v.Model != "" {
		return nil, nil, fmt.Errorf("vm %s: vm.model %s is for VMs booted for a run (bench, run); a named VM boots the backend's own model", n.Name, v.Model)
	}
	for _, note := range notes {
		fmt.Fprintf(log, "vm %s: note: %s\n", n.Name, note)
	}
	backend, err := registry.New(v.Backend, n.Env.Registry())
	if err != nil {
		return nil, nil, err
	}
	img, err := guestvm.LoadImage(n.Env.Store, v.Image)
	if err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // G301: the mode named VMs' state directories have always had; tightening it is a change of its own
		return nil, nil, err
	}
	sized, err := spec.DefaultSpec(SizedFor)
	if err != nil {
		return nil, nil, err
	}
	sized.VM = v
	mem, disk := spec.VMSize(sized)
	fmt.Fprintf(log, "vm %s: booting %s (kernel %s), %d vCPUs, %d MiB, %s scratch disk\n", n.Name, v.Image, img.KernelVersion, v.CPUs, mem, formatMiB(disk))
	m, c, err := guestvm.Boot(ctx, backend, log, hv.Spec{Name: n.Name, Image: img, CPUs: v.CPUs, MemoryMiB: mem, DiskBytes: disk, Accel: v.Accel, StateDir: dir, Detach: true, BootTimeout: n.Env.BootTimeout}, n.Env.BootTimeoutFor, "")
	if err != nil {
		return nil, nil, fmt.Errorf("vm %s: %w", n.Name, err)
	}
	defer c.Close()
	info, err := c.Info(ctx)
	if err != nil {
		_ = m.Stop(context.Background())
		return nil, nil, err
	}
	return m, info, nil
}

func formatMiB(b int64) string { return fmt.Sprintf("%d MiB", b>>20) }

// Status is a named VM as the host sees it and its agent's Info, asked
// within 10 s; agentErr says why the agent did not answer when it did not.
func (s Store) Status(ctx context.Context, name string) (mi hv.MachineInfo, info *agentpb.InfoReply, agentErr, err error) {
	m, err := s.Attach(ctx, name)
	if err != nil {
		return mi, nil, nil, err
	}
	c, err := guestvm.AgentOver(m, "")
	if err != nil {
		return m.Info(), nil, nil, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	info, agentErr = c.Info(ctx)
	return m.Info(), info, agentErr, nil
}

// Stop powers off a named VM attached earlier, through its agent first
// and by force when it does not answer.
func Stop(m hv.Machine) error {
	c, err := guestvm.AgentOver(m, "")
	if err != nil {
		return err
	}
	return guestvm.Stop(c, m)
}
