// Package experiment runs measurements on targets: the host's agent and agents
// in VMs it boots or attaches to.
package experiment

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/hv"
)

// AgentOver connects an agent client to a machine's channel, tied to the
// machine's life: once the VM ends, calls fail at once saying so.
func AgentOver(m hv.Machine) (*agent.Client, error) {
	c, err := agent.NewClient(func(ctx context.Context) (net.Conn, error) { return m.DialAgent(ctx) })
	if err != nil {
		return nil, err
	}
	c.EndsWith(m.Done(), func() error {
		info := m.Info()
		why := "it stopped"
		if err := m.Err(); err != nil {
			why = err.Error()
		}
		return fmt.Errorf("vm %s ended (%s); its console is in %s", info.Name, why, info.ConsoleLog)
	})
	return c, nil
}

// BootVM starts a VM and waits until its agent answers Info; the client it
// returns is the one that got the answer (a channel may take one connection).
func BootVM(ctx context.Context, backend hv.Backend, log io.Writer, spec hv.Spec) (hv.Machine, *agent.Client, error) {
	var client *agent.Client
	spec.Ready = func(ctx context.Context, m hv.Machine) error {
		c, err := AgentOver(m)
		if err != nil {
			return err
		}
		if _, err := c.Info(ctx); err != nil {
			c.Close()
			return err
		}
		if client != nil {
			client.Close()
		}
		client = c
		return nil
	}
	spec.Log = log
	m, err := backend.Start(ctx, spec)
	if err != nil {
		if client != nil {
			client.Close()
		}
		return nil, nil, err
	}
	if client == nil {
		// A backend that did not call Ready: connect now.
		if client, err = AgentOver(m); err != nil {
			_ = m.Stop(context.Background())
			return nil, nil, err
		}
	}
	return m, client, nil
}
