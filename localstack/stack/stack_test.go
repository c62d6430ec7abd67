package stack

import (
	"strings"
	"testing"
)

func TestImageAllowList(t *testing.T) {
	// No entries: the local stack runs no container, so any image may run.
	all, err := imageAllowList(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := all.Check("evil.example.com/miner:1"); err != nil {
		t.Errorf("default list: %v", err)
	}
	// With entries (maestro local -ecs-image) only those, as in AWS.
	list, err := imageAllowList([]string{"docker.io/library/busybox"})
	if err != nil {
		t.Fatal(err)
	}
	if err := list.Check("busybox"); err != nil {
		t.Errorf("busybox: %v", err)
	}
	if err := list.Check("evil.example.com/miner:1"); err == nil {
		t.Error("an image off the list is allowed")
	}
	if _, err := imageAllowList([]string{"busybox"}); err == nil || !strings.Contains(err.Error(), `"busybox"`) {
		t.Errorf("an entry without a registry: %v", err)
	}
}
