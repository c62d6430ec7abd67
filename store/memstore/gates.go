package memstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// PutBreakpoint stores a breakpoint of workflow wf (the same one twice is
// stored once).
func (s *Gates) PutBreakpoint(ctx context.Context, wf string, b store.Breakpoint) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	defer s.lock()()
	if err := s.t.one(put(layout.WorkflowPK(wf), layout.BreakpointSK(b.StepID, b.Version, b.Instance, b.Run, b.Attempt), &breakpointItem{b: b})); err != nil {
		return fmt.Errorf("store: put breakpoint of %s step %s: %w", wf, b.StepID, err)
	}
	return nil
}

// ListBreakpoints returns workflow wf's breakpoints (of step step only,
// unless it is empty) in key order: by step, then version, instance, run,
// attempt.
func (s *Gates) ListBreakpoints(ctx context.Context, wf, step string, consistent bool) ([]store.Breakpoint, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	defer s.lock()()
	return s.breakpoints(wf, step), nil
}

func (s *Gates) breakpoints(wf, step string) []store.Breakpoint {
	var out []store.Breakpoint
	pk := layout.WorkflowPK(wf)
	keys, _ := s.t.run(query{pk: pk, prefix: layout.BreakpointPrefix(step)})
	for _, sk := range keys {
		out = append(out, s.t.get(pk, sk).(*breakpointItem).b)
	}
	return out
}

// DeleteBreakpoints removes every breakpoint of workflow wf's step (every
// one, step empty) and returns them.
func (s *Gates) DeleteBreakpoints(ctx context.Context, wf, step string) ([]store.Breakpoint, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	defer s.lock()()
	bps := s.breakpoints(wf, step)
	for _, b := range bps {
		s.t.set(layout.WorkflowPK(wf), layout.BreakpointSK(b.StepID, b.Version, b.Instance, b.Run, b.Attempt), nil)
	}
	return bps, nil
}

// PutTagPermit creates a tag permit or changes its limit, keeping its
// holders and waiters, bumping its version; it returns it as stored.
func (s *Gates) PutTagPermit(ctx context.Context, tag string, maxAllowed, now int64) (*store.TagPermit, error) {
	return s.putPermit(ctx, layout.PermitPK(tag), layout.PermitSK, tag, func(p *permitItem) { p.maxAllowed = maxAllowed }, now)
}

// PutJobQueue creates a job queue or changes its capacity, keeping its
// holders and waiters, bumping its version; it returns it as stored.
func (s *Gates) PutJobQueue(ctx context.Context, name string, c store.QueueCapacity, now int64) (*store.TagPermit, error) {
	return s.putPermit(ctx, layout.JobQueuePK, layout.JobQueueSK(name), name, func(p *permitItem) { p.queue = &c }, now)
}

func (s *Gates) putPermit(ctx context.Context, pk, sk, name string, set func(*permitItem), now int64) (*store.TagPermit, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	defer s.lock()()
	var out *permitItem
	err := s.t.one(write{pk: pk, sk: sk, apply: func(cur any) (any, error) {
		n := &permitItem{createTime: now}
		if p, ok := cur.(*permitItem); ok {
			c := *p
			n = &c
		}
		if n.holders == nil {
			n.holders = map[string]int64{}
		}
		if n.waiters == nil {
			n.waiters = map[string]int64{}
		}
		set(n)
		n.modifyTime = now
		n.v++
		out = n
		return n, nil
	}})
	if err != nil {
		what := "tag permit"
		if pk == layout.JobQueuePK {
			what = "job queue"
		}
		return nil, fmt.Errorf("store: put %s %q: %w", what, name, err)
	}
	return out.permit(name), nil
}

// GetTagPermit returns one tag permit, or store.ErrNotFound.
func (s *Gates) GetTagPermit(ctx context.Context, tag string) (*store.TagPermit, error) {
	m, err := s.GetTagPermits(ctx, []string{tag})
	if err != nil {
		return nil, err
	}
	p, ok := m[tag]
	if !ok {
		return nil, store.ErrNotFound
	}
	return p, nil
}

// GetTagPermits returns the permits of those of tags that have one.
func (s *Gates) GetTagPermits(ctx context.Context, tags []string) (map[string]*store.TagPermit, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	defer s.lock()()
	out := make(map[string]*store.TagPermit, len(tags))
	for _, t := range tags {
		if p, ok := s.t.get(layout.PermitPK(t), layout.PermitSK).(*permitItem); ok {
			out[t] = p.permit(t)
		}
	}
	return out, nil
}

// DeleteTagPermit removes a tag permit and returns it as it was, or
// store.ErrNotFound.
func (s *Gates) DeleteTagPermit(ctx context.Context, tag string) (*store.TagPermit, error) {
	return s.deletePermit(ctx, layout.PermitPK(tag), layout.PermitSK, tag)
}

// DeleteJobQueue removes a job queue and returns it as it was, or
// store.ErrNotFound.
func (s *Gates) DeleteJobQueue(ctx context.Context, name string) (*store.TagPermit, error) {
	return s.deletePermit(ctx, layout.JobQueuePK, layout.JobQueueSK(name), name)
}

func (s *Gates) deletePermit(ctx context.Context, pk, sk, name string) (*store.TagPermit, error) {
	return lookup(s.base, ctx, pk, sk, func(p *permitItem) (*store.TagPermit, error) {
		s.t.set(pk, sk, nil)
		return p.permit(name), nil
	})
}

// GetJobQueue returns one job queue, or store.ErrNotFound.
func (s *Gates) GetJobQueue(ctx context.Context, name string) (*store.TagPermit, error) {
	return lookup(s.base, ctx, layout.JobQueuePK, layout.JobQueueSK(name), func(p *permitItem) (*store.TagPermit, error) {
		return p.permit(name), nil
	})
}

// GetJobQueues returns every job queue, by name.
func (s *Gates) GetJobQueues(ctx context.Context) (map[string]*store.TagPermit, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	defer s.lock()()
	out := map[string]*store.TagPermit{}
	keys, _ := s.t.run(query{pk: layout.JobQueuePK})
	for _, sk := range keys {
		name := strings.TrimPrefix(sk, "Q#")
		out[name] = s.t.get(layout.JobQueuePK, sk).(*permitItem).permit(name)
	}
	return out, nil
}
