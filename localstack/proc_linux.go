package localstack

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the child in its own process group and has the
// kernel kill it should this process die without calling Close.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
