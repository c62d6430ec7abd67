package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/maestro-serverless/maestro/store"
)

// TestListInstancesByStatus pages through the FAILED instances of a
// workflow three at a time, newest first, through cursors — past pages
// the filter leaves empty — and finds each exactly once.
func TestListInstancesByStatus(t *testing.T) {
	s, now := newStoreWithWorkflow(t)
	ctx := context.Background()
	var failed []int64
	for i := range 40 {
		status := "SUCCEEDED"
		if i%7 == 3 {
			status = "FAILED"
		}
		rec, _, err := s.Instances.CreateInstance(ctx, store.NewInstance{WorkflowID: "wf", Version: 1, UUID: fmt.Sprint(i), Status: status,
			State: state, FirstEvent: store.Event{ID: "0-start", Body: []byte(`{}`)}, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if status == "FAILED" {
			failed = append([]int64{rec.InstanceID}, failed...) // newest first
		}
	}
	var got []int64
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 20 {
			t.Fatalf("no end after %d pages: %v", pages, got)
		}
		recs, next, err := s.Instances.ListInstances(ctx, "wf", "FAILED", cursor, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) > 3 {
			t.Fatalf("page of %d, limit 3", len(recs))
		}
		for _, r := range recs {
			if r.Status != "FAILED" {
				t.Fatalf("instance %d is %s", r.InstanceID, r.Status)
			}
			got = append(got, r.InstanceID)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if fmt.Sprint(got) != fmt.Sprint(failed) {
		t.Fatalf("listed %v, want %v", got, failed)
	}
	all, next, err := s.Instances.ListInstances(ctx, "wf", "", "", 100)
	if err != nil || len(all) != 40 || next != "" {
		t.Fatalf("unfiltered: %d instances, next %q, %v", len(all), next, err)
	}
}
