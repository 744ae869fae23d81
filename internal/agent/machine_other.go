//go:build !linux && !darwin

package agent

import "github.com/qoslab/qoslab/internal/agent/agentpb"

// describeMachine knows nothing more off Linux and darwin.
func describeMachine(r *agentpb.InfoReply) {
	r.Virtualization = "unknown on this OS"
}
