package childproc

import (
	"io"
	"os/exec"

	"github.com/qoslab/qoslab/internal/qos"
)

// Piped is a helper child started by StartPiped: qoslab speaks to it over
// its stdin and stdout, and a goroutine of its own reaps it when it exits.
type Piped struct {
	Cmd    *exec.Cmd
	Stdin  io.WriteCloser
	Stdout io.ReadCloser
	// StartClass is the class the child was started at, as read back.
	StartClass qos.Applied
	exited     chan struct{}
	err        error
}

// StartPiped starts cmd as a helper child of this process: in a process
// group of its own (a terminal's Ctrl-C reaches only qoslab, which then
// stops the child in order), killed when qoslab dies (Linux; elsewhere the
// child is to end when its stdin closes), with pipes to its stdin and
// stdout, at class (see Start), and reaped as soon as it exits (Exited,
// Err). cmd's stdin and stdout must be unset; its stderr is the caller's.
func StartPiped(cmd *exec.Cmd, class qos.Class) (*Piped, error) {
	cmd.SysProcAttr = helperProcAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	applied, err := Start(cmd, class)
	if err != nil {
		return nil, err
	}
	p := &Piped{Cmd: cmd, Stdin: stdin, Stdout: stdout, StartClass: applied, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Pid is the child's process id.
func (p *Piped) Pid() int { return p.Cmd.Process.Pid }

// Exited is closed once the child has exited and been reaped.
func (p *Piped) Exited() <-chan struct{} { return p.exited }

// Err is how the child ended, as cmd.Wait said (nil for exit status 0);
// read it only once Exited is closed.
func (p *Piped) Err() error { return p.err }

// Kill kills the child and returns once it has been reaped; a child that
// has exited already is only waited for.
func (p *Piped) Kill() {
	_ = p.Cmd.Process.Kill()
	<-p.exited
}
