package localstack

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// niceOf reads the nice value of thread tid of process pid from /proc.
func niceOf(t *testing.T, pid int, tid string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + tid + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// The command name (field 2) may hold spaces: count from after it.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	n, err := strconv.Atoi(fields[16]) // field 19, nice
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestReniceSetsEveryThread(t *testing.T) {
	// Raising a nice value needs no privilege, so the test runs anywhere;
	// lowering it (what the launcher does for DynamoDB Local) uses the
	// same calls.
	cmd := exec.Command("sleep", "30")
	p, err := startChild(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.stop() })
	pid := cmd.Process.Pid
	if err := renice(pid, 7); err != nil {
		t.Fatal(err)
	}
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		if got := niceOf(t, pid, task.Name()); got != 7 {
			t.Errorf("thread %s: nice %d, want 7", task.Name(), got)
		}
	}
	if err := renice(-1, 0); err == nil {
		t.Error("renice of a process that does not exist: no error")
	}
}
