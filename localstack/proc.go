package localstack

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
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
//
// On Linux the kernel signals the child when the OS thread that forked it
// ends (setProcessGroup's Pdeathsig), not only when this process does, and
// the Go runtime ends a thread whose goroutine exits while locked to it
// (golang/go#27505): any code doing so on the thread that had forked an
// emulator would stop it mid-test. So the child is forked and waited for by
// one goroutine locked to its thread, which therefore lives until the
// child exits.
func startChild(cmd *exec.Cmd) (*childProcess, error) {
	setProcessGroup(cmd)
	p := &childProcess{cmd: cmd, exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the child
		if err := cmd.Start(); err != nil {
			started <- fmt.Errorf("start %s: %w", cmd.Path, err)
			return
		}
		started <- nil
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

// ended reports whether the child has exited.
func (p *childProcess) ended() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// stop asks the child's process group to terminate, then kills it if it
// has not exited within five seconds, and waits for the exit.
func (p *childProcess) stop() error {
	if p.ended() {
		return nil
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
