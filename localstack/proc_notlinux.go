//go:build unix && !linux

package localstack

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the child in its own process group.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
