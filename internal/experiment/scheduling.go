package experiment

import (
	"fmt"

	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/procsched"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/results"
)

// Scheduling is how qoslab's own processes were scheduled in a session: the
// controller as it was started (`nice -n 10 qoslab` gives it nice 10), and
// the class each child it started was started at. Children are started at
// the default class whatever the controller's own (see childproc), so that
// nothing is inherited by accident; run.json keeps what was asked and
// applied, and a warning says when it differs.
type Scheduling struct {
	Controller procsched.Scheduling `json:"controller"`
	// Started maps each child (startedHostAgent, startedVM,
	// startedContention) to the class it was started at.
	Started map[string]hv.ProcessClass `json:"started,omitempty"`
}

// The children Scheduling.Started names.
const (
	startedHostAgent  = "host agent"
	startedVM         = "vm hypervisor"
	startedContention = "contention spinners"
)

// recordScheduling records the session's scheduling in run.json (as
// results.Scheduling, its shape there); the caller saves it.
func (x *execution) recordScheduling() error {
	r, err := results.NewRecorded(results.Scheduling(x.out.Scheduling))
	if err != nil {
		return fmt.Errorf("record the scheduling: %w", err)
	}
	x.dir.Run.Scheduling = r
	return nil
}

// readScheduling reads the controller's own scheduling.
func readScheduling() Scheduling {
	return Scheduling{Controller: procsched.Read(), Started: map[string]hv.ProcessClass{}}
}

// Warnings say what in the controller's own scheduling is not the default.
func (s Scheduling) Warnings() []string { return s.Controller.Warnings() }

// started records that child was started at c, and returns a warning when
// it did not get the class asked for.
func (s *Scheduling) started(child string, c hv.ProcessClass) string {
	s.Started[child] = c
	if c.OK() {
		return ""
	}
	return fmt.Sprintf("the %s started at %s: its threads run at that class unless they set their own (the VM's vCPU threads unless vm.host_qos gives them one), so the host's and the VM's cells do not compete on equal terms; run qoslab without nice, or as root", child, c.Text())
}

// processClass records a class as Scheduling and hv carry it.
func processClass(a qos.Applied) hv.ProcessClass {
	return hv.ProcessClass{Asked: a.Asked.String(), Applied: a.Applied.String(), Detail: a.Detail, Reason: a.Reason}
}
