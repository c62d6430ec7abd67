//go:build unix

package localstack

import (
	"errors"
	"os"
	"syscall"
)

// terminateGroup sends SIGTERM to the process group led by p.
func terminateGroup(p *os.Process) error {
	return signalGroup(p, syscall.SIGTERM)
}

// killGroup sends SIGKILL to the process group led by p.
func killGroup(p *os.Process) error {
	return signalGroup(p, syscall.SIGKILL)
}

func signalGroup(p *os.Process, sig syscall.Signal) error {
	err := syscall.Kill(-p.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil // already gone
	}
	return err
}
