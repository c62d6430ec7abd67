package storetest

import (
	"strings"

	"github.com/maestro-serverless/maestro/store"
)

// jobTemplates: versions of a job type are items of their own; a list
// reads one version across job types, in job type order; deleting without
// a version removes every version of that job type and no other (a job
// type that starts like it stays); a template past DynamoDB's item limit
// is refused before it is written.
func jobTemplates(h *H) {
	s := h.S.Templates
	put := func(jobType, version string) {
		h.Helper()
		h.OK(s.PutJobTemplate(h.Ctx, store.JobTemplate{JobType: jobType, Version: version,
			Request: []byte(`{"definition":{}}`), Meta: []byte(`{}`), CreateTime: 5}), "put %s@%s", jobType, version)
	}
	put("shell", "v1")
	put("shell", "default")
	put("shellx", "v1") // a job type that starts like another
	put("spark", "default")

	got, err := s.GetJobTemplate(h.Ctx, "shell", "v1")
	h.OK(err, "get shell@v1")
	h.Eq(*got, store.JobTemplate{JobType: "shell", Version: "v1", Request: []byte(`{"definition":{}}`), Meta: []byte(`{}`), CreateTime: 5}, "shell@v1")
	_, err = s.GetJobTemplate(h.Ctx, "shell", "v2")
	h.Is(err, store.ErrNotFound, "get a missing version")

	list, err := s.ListJobTemplates(h.Ctx, "default")
	h.OK(err, "list default")
	var names []string
	for _, t := range list {
		names = append(names, t.JobType+"@"+t.Version)
	}
	h.Eq(names, []string{"shell@default", "spark@default"}, "the default versions")
	all, err := s.ListJobTemplates(h.Ctx, "")
	h.OK(err, "list all")
	h.Eq(len(all), 4, "every version")

	n, err := s.DeleteJobTemplate(h.Ctx, "shell", "")
	h.OK(err, "delete every version of shell")
	h.Eq(n, 2, "versions of shell deleted")
	_, err = s.GetJobTemplate(h.Ctx, "shellx", "v1")
	h.OK(err, "shellx is another job type")
	n, err = s.DeleteJobTemplate(h.Ctx, "spark", "v9")
	h.OK(err, "delete a missing version")
	h.Eq(n, 0, "missing versions deleted")
	n, err = s.DeleteJobTemplate(h.Ctx, "spark", "default")
	h.OK(err, "delete spark@default")
	h.Eq(n, 1, "spark@default deleted")

	big := store.JobTemplate{JobType: "big", Version: "default", Meta: []byte(`{}`),
		Request: []byte(`{"x":"` + strings.Repeat("x", store.MaxItemBytes) + `"}`)}
	h.TooLarge(s.PutJobTemplate(h.Ctx, big), "JT T#big#default", "a template past 400 KB")
	_, err = s.GetJobTemplate(h.Ctx, "big", "default")
	h.Is(err, store.ErrNotFound, "the big template is not stored")
}
