package localstack

import (
	"bufio"
	"errors"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
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

func TestChildOutlivesTheThreadThatStartedIt(t *testing.T) {
	// The child blocks SIGTERM, so a parent-death signal stays pending in
	// /proc/<pid>/status where the test can see it, instead of racing the
	// child's exit.
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed (the launcher's moto runs on it):", err)
	}
	cmd := exec.Command(py, "-c", "import signal,sys,time\n"+
		"signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM])\n"+
		"print('ready', flush=True)\n"+
		"time.sleep(60)\n")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	// The caller's goroutine is locked to its thread and exits without
	// unlocking: the runtime ends that thread.
	type result struct {
		p   *childProcess
		tid int
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		p, err := startChild(cmd)
		done <- result{p, syscall.Gettid(), err}
	}()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { _ = killGroup(cmd.Process); _ = r.p.exitsWithin(5 * time.Second) })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("the child said %q (%v): it ended before it was ready, as one sent SIGTERM when the thread that started it ended does", line, err)
	}
	task := "/proc/self/task/" + strconv.Itoa(r.tid)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(task); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("thread %d of the caller did not end", r.tid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The thread has ended: a parent-death signal for it was sent by now.
	status, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		name, mask, ok := strings.Cut(l, ":")
		if !ok || (name != "SigPnd" && name != "ShdPnd") {
			continue
		}
		bits, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		if bits&(1<<(syscall.SIGTERM-1)) != 0 {
			t.Fatalf("the child was sent SIGTERM when the thread of the goroutine that started it ended (%s)", strings.TrimSpace(l))
		}
	}
}

// TestListensOnTellsWhoHoldsAPort: this process holds its listener's port,
// its parent does not, and a closed port is held by nobody.
func TestListensOnTellsWhoHoldsAPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if !listensOn(os.Getpid(), port) {
		t.Fatalf("this process does not hold its own port %d", port)
	}
	if listensOn(os.Getppid(), port) {
		t.Fatalf("the parent holds port %d", port)
	}
	l.Close()
	if listensOn(os.Getpid(), port) {
		t.Fatalf("a closed port %d is still held", port)
	}
}
