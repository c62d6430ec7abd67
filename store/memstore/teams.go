package memstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/maestro-serverless/maestro/caller"
	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// teamItem is TEAMS/T#<name>.
type teamItem struct {
	members    []string
	modifyTime int64
	principal  string
}

func (t *teamItem) size(pk, sk string, _ bool) int {
	n := keyAttrs(pk, sk) + len("members") + 3 + len("modify_time") + numSize(t.modifyTime)
	for _, m := range t.members {
		n += 1 + len(m)
	}
	if t.principal != "" {
		n += len("principal") + len(t.principal)
	}
	return n
}

func (t *teamItem) team(name string) store.Team {
	return store.Team{Name: name, Members: slices.Clone(t.members), ModifyTime: t.modifyTime, Principal: t.principal}
}

// teamsCountItem is TEAMS/COUNT: how many teams exist, and the sequence of
// their changes.
type teamsCountItem struct{ n, seq int64 }

// teamsCount returns the counter. The caller holds the lock.
func (s *Teams) teamsCount() teamsCountItem {
	if c, ok := s.t.get(layout.TeamsPK, layout.TeamsCountSK).(*teamsCountItem); ok {
		return *c
	}
	return teamsCountItem{}
}

// PutTeam creates team t or replaces its members (created says which),
// with now as its ModifyTime and the caller as its Principal; creating
// one past store.MaxTeams fails with store.ErrLimit, writing nothing.
func (s *Teams) PutTeam(ctx context.Context, t store.Team, now time.Time) (created bool, err error) {
	if err := ctxErr(ctx); err != nil {
		return false, err
	}
	defer s.lock()()
	c := s.teamsCount()
	sk := layout.TeamSK(t.Name)
	exists := s.t.get(layout.TeamsPK, sk) != nil
	if !exists {
		if c.n >= store.MaxTeams {
			return false, fmt.Errorf("store: create team %s: %w: at most %d teams exist", t.Name, store.ErrLimit, store.MaxTeams)
		}
		c.n++
	}
	c.seq++
	members := slices.Clone(t.Members)
	if members == nil {
		members = []string{}
	}
	it := &teamItem{members: members, modifyTime: now.UnixMilli(), principal: caller.From(ctx)}
	if err := s.t.transact([]write{put(layout.TeamsPK, sk, it), put(layout.TeamsPK, layout.TeamsCountSK, &c)}); err != nil {
		return false, fmt.Errorf("store: put team %s: %w", t.Name, err)
	}
	return !exists, nil
}

// GetTeam returns a team, store.ErrNotFound when there is none.
func (s *Teams) GetTeam(ctx context.Context, name string) (*store.Team, error) {
	return lookup(s.base, ctx, layout.TeamsPK, layout.TeamSK(name), func(it *teamItem) (*store.Team, error) {
		t := it.team(name)
		return &t, nil
	})
}

// DeleteTeam deletes a team, store.ErrNotFound when there is none.
func (s *Teams) DeleteTeam(ctx context.Context, name string, now time.Time) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	defer s.lock()()
	sk := layout.TeamSK(name)
	if s.t.get(layout.TeamsPK, sk) == nil {
		return store.ErrNotFound
	}
	c := s.teamsCount()
	c.n, c.seq = c.n-1, c.seq+1
	return s.t.transact([]write{del(layout.TeamsPK, sk), put(layout.TeamsPK, layout.TeamsCountSK, &c)})
}

// ListTeams returns every team in name order.
func (s *Teams) ListTeams(ctx context.Context) ([]store.Team, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	defer s.lock()()
	out := []store.Team{}
	sks, _ := s.t.run(query{pk: layout.TeamsPK, prefix: layout.TeamPrefix})
	for _, sk := range sks {
		if it, ok := s.t.get(layout.TeamsPK, sk).(*teamItem); ok {
			out = append(out, it.team(strings.TrimPrefix(sk, layout.TeamPrefix)))
		}
	}
	return out, nil
}
