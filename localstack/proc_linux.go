package localstack

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// setProcessGroup puts the child in its own process group and has the
// kernel kill it should this process die without calling Close.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// renice sets the scheduling priority (nice value) of every thread of
// process pid; threads it starts later inherit their creator's. Lowering
// a nice value needs CAP_SYS_NICE (root): without it the error says so.
func renice(pid, nice int) error {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("list threads of pid %d: %w", pid, err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("set nice %d on thread %d of pid %d: %w", nice, tid, pid, err)
		}
	}
	return nil
}
