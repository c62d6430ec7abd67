package localstack

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
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

// listensOn reports whether process pid holds a listening TCP socket on
// port: a LISTEN entry for the port in /proc/net/tcp or tcp6 whose socket
// inode is one of the process's descriptors. A port taken by another
// process between choosing and binding answers probes too: only this tells
// the child's answers from the other's.
func listensOn(pid, port int) bool {
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			// sl local_address rem_address st ... inode (the tenth field)
			if len(f) < 10 || f[3] != "0A" {
				continue
			}
			_, hexPort, ok := strings.Cut(f[1], ":")
			if p, err := strconv.ParseInt(hexPort, 16, 32); ok && err == nil && int(p) == port {
				inodes["socket:["+f[9]+"]"] = true
			}
		}
	}
	if len(inodes) == 0 {
		return false
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if target, err := os.Readlink(dir + "/" + fd.Name()); err == nil && inodes[target] {
			return true
		}
	}
	return false
}
