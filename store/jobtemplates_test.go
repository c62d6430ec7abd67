package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/store"
)

func TestJobTemplates(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	put := func(jobType, version string) {
		t.Helper()
		if err := s.Templates.PutJobTemplate(ctx, store.JobTemplate{JobType: jobType, Version: version,
			Request: []byte(`{"definition":{}}`), Meta: []byte(`{}`), CreateTime: 5}); err != nil {
			t.Fatal(err)
		}
	}
	put("shell", "v1")
	put("shell", "default")
	put("shellx", "v1") // a job type that starts like another
	put("spark", "default")
	got, err := s.Templates.GetJobTemplate(ctx, "shell", "v1")
	if err != nil || got.JobType != "shell" || got.Version != "v1" || got.CreateTime != 5 || string(got.Request) != `{"definition":{}}` {
		t.Fatalf("get: %+v %v", got, err)
	}
	if _, err := s.Templates.GetJobTemplate(ctx, "shell", "v2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get a missing version: %v", err)
	}
	list, err := s.Templates.ListJobTemplates(ctx, "default")
	if err != nil || len(list) != 2 || list[0].JobType != "shell" || list[1].JobType != "spark" {
		t.Fatalf("list default: %+v %v", list, err)
	}
	if n, err := s.Templates.DeleteJobTemplate(ctx, "shell", ""); err != nil || n != 2 {
		t.Fatalf("delete every version of shell: %d %v", n, err)
	}
	if _, err := s.Templates.GetJobTemplate(ctx, "shellx", "v1"); err != nil {
		t.Fatalf("shellx is another job type: %v", err)
	}
	if n, err := s.Templates.DeleteJobTemplate(ctx, "spark", "v9"); err != nil || n != 0 {
		t.Fatalf("delete a missing version: %d %v", n, err)
	}
	// Past DynamoDB's item limit: refused before it is sent, nothing stored.
	big := store.JobTemplate{JobType: "big", Version: "default", Request: []byte(`{"x":"` + strings.Repeat("x", store.MaxItemBytes) + `"}`), Meta: []byte(`{}`)}
	var tl *store.ItemTooLargeError
	if err := s.Templates.PutJobTemplate(ctx, big); !errors.As(err, &tl) || tl.Bytes <= store.MaxItemBytes {
		t.Fatalf("a template past 400 KB: %v", err)
	}
	if _, err := s.Templates.GetJobTemplate(ctx, "big", "default"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the big template was stored: %v", err)
	}
}
