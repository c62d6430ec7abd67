//go:build !unix

package localstack

import (
	"errors"
	"os"
	"os/exec"
)

// setProcessGroup does nothing where process groups do not exist.
func setProcessGroup(*exec.Cmd) {}

// terminateGroup kills p; without process groups there is no gentler way.
func terminateGroup(p *os.Process) error { return p.Kill() }

// killGroup kills p.
func killGroup(p *os.Process) error { return p.Kill() }

// renice cannot change a process's priority here.
func renice(int, int) error { return errors.New("process priorities are not supported on this system") }

// listensOn is true where /proc does not tell which process holds a port.
func listensOn(pid, port int) bool { return true }
