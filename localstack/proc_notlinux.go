//go:build unix && !linux

package localstack

import (
	"fmt"
	"os/exec"
	"syscall"
)

// setProcessGroup puts the child in its own process group.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// renice sets the scheduling priority (nice value) of process pid.
// Lowering a nice value needs root: without it the error says so.
func renice(pid, nice int) error {
	if err := syscall.Setpriority(syscall.PRIO_PROCESS, pid, nice); err != nil {
		return fmt.Errorf("set nice %d on pid %d: %w", nice, pid, err)
	}
	return nil
}

// listensOn is true where /proc does not tell which process holds a port.
func listensOn(pid, port int) bool { return true }
