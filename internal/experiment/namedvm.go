package experiment

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/hv/registry"
	"github.com/qoslab/qoslab/internal/spec"
)

// NamedVMSpec is the spec a named VM is sized for when its memory or disk
// is not given: the built-in subsumption experiment, the largest the
// built-in specs ask of a VM.
const NamedVMSpec = "subsumption"

// NamedVM is a VM that outlives the command that starts it.
type NamedVM struct {
	Name string
	// VM is what to boot; zero memory and disk are sized for NamedVMSpec.
	VM  spec.VMSpec
	Env VMEnv
}

// StartNamedVM boots a named VM and leaves it running; its state lives in
// the env's StateHome. It refuses a name that is running already.
func StartNamedVM(ctx context.Context, n NamedVM, log io.Writer) (hv.Machine, *agentpb.InfoReply, error) {
	store := n.Env.NamedVMs()
	dir := store.Dir(n.Name)
	if m, err := store.Attach(ctx, n.Name); err == nil {
		return nil, nil, fmt.Errorf("vm %s is already running (pid %d); stop it first with `qoslab vm stop %s`", n.Name, m.Info().PID, n.Name)
	}
	v, notes := fitVM(n.VM, n.Env)
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
	img, err := loadImage(n.Env.Store, v.Image)
	if err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // G301: the mode named VMs' state directories have always had; tightening it is a change of its own
		return nil, nil, err
	}
	sized, err := spec.DefaultSpec(NamedVMSpec)
	if err != nil {
		return nil, nil, err
	}
	sized.VM = v
	mem, disk := spec.VMSize(sized)
	fmt.Fprintf(log, "vm %s: booting %s (kernel %s), %d vCPUs, %d MiB, %s scratch disk\n", n.Name, v.Image, img.KernelVersion, v.CPUs, mem, formatMiB(disk))
	m, c, err := BootVM(ctx, backend, log, hv.Spec{Name: n.Name, Image: img, CPUs: v.CPUs, MemoryMiB: mem, DiskBytes: disk, Accel: v.Accel, StateDir: dir, Detach: true}, n.Env.bootTimeout, "")
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

// VMStatus is a named VM as the host sees it and its agent's Info, asked
// within 10 s; agentErr says why the agent did not answer when it did not.
func VMStatus(ctx context.Context, env VMEnv, name string) (mi hv.MachineInfo, info *agentpb.InfoReply, agentErr, err error) {
	m, err := env.NamedVMs().Attach(ctx, name)
	if err != nil {
		return mi, nil, nil, err
	}
	c, err := agentOver(m, "")
	if err != nil {
		return m.Info(), nil, nil, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	info, agentErr = c.Info(ctx)
	return m.Info(), info, agentErr, nil
}

// StopVM powers off a VM started earlier (a named VM), through its agent
// first and by force when it does not answer.
func StopVM(m hv.Machine) error {
	c, err := agentOver(m, "")
	if err != nil {
		return err
	}
	return stopMachine(c, m)
}
