package memstore

import (
	"context"
	"slices"
	"strings"

	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// jobTemplateItem is a job template version (store.Templates): its
// request and metadata are stored as they are, uncompressed.
type jobTemplateItem struct {
	jobType, version string
	request, meta    []byte
	createTime       int64
}

func (j *jobTemplateItem) size(pk, sk string, _ bool) int {
	return keyAttrs(pk, sk) + len("job_type") + len(j.jobType) + len("version") + len(j.version) +
		len("request") + len(j.request) + len("meta") + len(j.meta) + len("create_time") + numSize(j.createTime)
}

func (j *jobTemplateItem) template() *store.JobTemplate {
	return &store.JobTemplate{JobType: j.jobType, Version: j.version,
		Request: slices.Clone(j.request), Meta: slices.Clone(j.meta), CreateTime: j.createTime}
}

// PutJobTemplate stores (or replaces) a job template version; an item past
// DynamoDB's limit is refused with a *store.ItemTooLargeError.
func (s *Templates) PutJobTemplate(ctx context.Context, t store.JobTemplate) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	defer s.lock()()
	it := &jobTemplateItem{jobType: t.JobType, version: t.Version,
		request: slices.Clone(t.Request), meta: slices.Clone(t.Meta), createTime: t.CreateTime}
	if err := s.t.one(put(layout.JobTemplatePK, layout.JobTemplateSK(t.JobType, t.Version), it)); err != nil {
		return wrapf(err, "store: put job template %s@%s", t.JobType, t.Version)
	}
	return nil
}

// GetJobTemplate returns a job template version, or store.ErrNotFound.
func (s *Templates) GetJobTemplate(ctx context.Context, jobType, version string) (*store.JobTemplate, error) {
	return lookup(s.base, ctx, layout.JobTemplatePK, layout.JobTemplateSK(jobType, version),
		func(it *jobTemplateItem) (*store.JobTemplate, error) { return it.template(), nil })
}

// ListJobTemplates returns the job templates of a version ("" every
// version), in job type order.
func (s *Templates) ListJobTemplates(ctx context.Context, version string) ([]store.JobTemplate, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	defer s.lock()()
	keys, _ := s.t.run(query{pk: layout.JobTemplatePK, prefix: "T#"})
	var out []store.JobTemplate
	for _, sk := range keys {
		it, ok := s.t.get(layout.JobTemplatePK, sk).(*jobTemplateItem)
		if ok && (version == "" || it.version == version) {
			out = append(out, *it.template())
		}
	}
	return out, nil
}

// DeleteJobTemplate removes a job template version, or every version of
// the job type when version is "", and returns how many it removed.
func (s *Templates) DeleteJobTemplate(ctx context.Context, jobType, version string) (int, error) {
	if err := ctxErr(ctx); err != nil {
		return 0, err
	}
	defer s.lock()()
	var sks []string
	if version != "" {
		sks = []string{layout.JobTemplateSK(jobType, version)}
	} else {
		sks, _ = s.t.run(query{pk: layout.JobTemplatePK, prefix: layout.JobTemplateSK(jobType, "")})
		sks = slices.Clone(sks)
	}
	n := 0
	for _, sk := range sks {
		if !strings.HasPrefix(sk, "T#") || s.t.get(layout.JobTemplatePK, sk) == nil {
			continue
		}
		s.t.set(layout.JobTemplatePK, sk, nil)
		n++
	}
	return n, nil
}
