package localstack

import (
	"errors"
	"fmt"
	"os/exec"
	"time"
)

// childProcess is a started child in its own process group.
type childProcess struct {
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the child has exited
	waitErr error         // set before exited is closed
}

// startChild starts cmd in a process group of its own, so that stopping it
// also stops anything it spawned.
func startChild(cmd *exec.Cmd) (*childProcess, error) {
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	p := &childProcess{cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// stop asks the child's process group to terminate, then kills it if it
// has not exited within five seconds, and waits for the exit.
func (p *childProcess) stop() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	if err := terminateGroup(p.cmd.Process); err != nil {
		return fmt.Errorf("stop pid %d: %w", p.cmd.Process.Pid, err)
	}
	if p.exitsWithin(5 * time.Second) {
		return nil
	}
	if err := killGroup(p.cmd.Process); err != nil {
		return fmt.Errorf("kill pid %d: %w", p.cmd.Process.Pid, err)
	}
	if p.exitsWithin(5 * time.Second) {
		return nil
	}
	return errors.Join(fmt.Errorf("pid %d did not exit after SIGKILL", p.cmd.Process.Pid), p.waitErr)
}

// exitsWithin reports whether the child has exited, or exits within d.
func (p *childProcess) exitsWithin(d time.Duration) bool {
	select {
	case <-p.exited:
		return true
	case <-time.After(d):
		return false
	}
}
