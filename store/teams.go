package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/access"
	"github.com/maestro-serverless/maestro/caller"
	"github.com/maestro-serverless/maestro/events"
	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// Team is a stored team: a named set of principal ARN patterns
// (access.Team), when it was last written and by whom. The store keeps
// what it is given; package access validates names and members.
type Team struct {
	Name    string
	Members []string
	// ModifyTime is when the team was last written (unix ms).
	ModifyTime int64
	// Principal is who wrote it (caller.From of the write).
	Principal string
}

// MaxTeams is the most teams the store keeps (access.MaxTeams): creating
// one more fails with ErrLimit.
const MaxTeams = access.MaxTeams

// The teams live in one partition, TEAMS: a T#<name> item each, and the
// counter item COUNT, which holds how many there are ("n") and the
// sequence of their changes ("seq"). Every change of a team is one
// transaction with the counter, conditioned on the sequence it read: the
// count is exact, so the limit holds under races, and the sequence numbers
// the changes' events. Each change's team_changed event rides in the
// counter's outbox (a deleted team's item has no image to carry it).
const (
	attrTeamCount = "n"
	attrTeamSeq   = "seq"
	attrMembers   = "members"
)

// teamsRead is what a team change reads first: the counter and the team.
type teamsRead struct {
	count, seq int64
	team       map[string]types.AttributeValue // nil: no such team
}

// read reads the counter and team name's item, strongly consistent, in
// one request.
func (s *Teams) read(ctx context.Context, name string) (teamsRead, error) {
	items, err := s.batchGet(ctx, []map[string]types.AttributeValue{
		key(layout.TeamsPK, layout.TeamsCountSK), key(layout.TeamsPK, layout.TeamSK(name)),
	})
	if err != nil {
		return teamsRead{}, fmt.Errorf("store: read team %s: %w", name, err)
	}
	var r teamsRead
	for _, it := range items {
		if getS(it, attrSK) == layout.TeamsCountSK {
			r.count, r.seq = getN(it, attrTeamCount), getN(it, attrTeamSeq)
		} else {
			r.team = it
		}
	}
	return r, nil
}

// countUpdate is the counter's part of a team change read as r: the new
// count, the next sequence number and the change's event in the outbox,
// conditioned on the sequence read.
func (s *Teams) countUpdate(ctx context.Context, r teamsRead, count int64, ev events.Event) (*types.Update, error) {
	ob, err := headOutbox(ctx, nil, ev)
	if err != nil {
		return nil, err
	}
	cond := "#s = :s"
	values := map[string]types.AttributeValue{":n": num(count), ":ns": num(r.seq + 1), ":ob": ob}
	if r.seq == 0 {
		cond = "attribute_not_exists(#s)"
	} else {
		values[":s"] = num(r.seq)
	}
	return &types.Update{
		TableName:                 aws.String(s.table),
		Key:                       key(layout.TeamsPK, layout.TeamsCountSK),
		UpdateExpression:          aws.String("SET #n = :n, #s = :ns, #ob = :ob"),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  map[string]string{"#n": attrTeamCount, "#s": attrTeamSeq, "#ob": attrOutbox},
		ExpressionAttributeValues: values,
	}, nil
}

// PutTeam creates team t or replaces its members; created says which. The
// team's ModifyTime is now and its Principal the caller (t's are ignored).
// Creating a team when MaxTeams exist fails with ErrLimit, writing
// nothing; a team past MaxItemBytes with an *ItemTooLargeError. A
// team_changed event records the change.
func (s *Teams) PutTeam(ctx context.Context, t Team, now time.Time) (created bool, err error) {
	err = retryConditional(ctx, "put team "+t.Name, func() (write, err error) {
		r, err := s.read(ctx, t.Name)
		if err != nil {
			return nil, err
		}
		exists := r.team != nil
		count, status, cond := r.count, events.TeamReplaced, "attribute_exists(pk)"
		if !exists {
			if r.count >= MaxTeams {
				return nil, fmt.Errorf("store: create team %s: %w: at most %d teams exist", t.Name, ErrLimit, MaxTeams)
			}
			count, status, cond = r.count+1, events.TeamCreated, "attribute_not_exists(pk)"
		}
		members := make([]types.AttributeValue, len(t.Members))
		for i, m := range t.Members {
			members[i] = str(m)
		}
		item := merge(key(layout.TeamsPK, layout.TeamSK(t.Name)), map[string]types.AttributeValue{
			attrMembers: &types.AttributeValueMemberL{Value: members}, "modify_time": num(millis(now)),
		})
		if p := caller.From(ctx); p != "" {
			item[attrPrincipal] = str(p)
		}
		cnt, err := s.countUpdate(ctx, r, count, events.TeamChange(t.Name, status, r.seq+1, millis(now)))
		if err != nil {
			return nil, err
		}
		_, write = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: aws.String(s.table), Item: item, ConditionExpression: aws.String(cond)}},
			{Update: cnt},
		}})
		created = !exists
		return write, nil
	})
	if err != nil {
		return false, err
	}
	return created, nil
}

// GetTeam returns a team, ErrNotFound when there is none.
func (s *Teams) GetTeam(ctx context.Context, name string) (*Team, error) {
	item, err := s.getItem(ctx, key(layout.TeamsPK, layout.TeamSK(name)), "get team %s", name)
	if err != nil {
		return nil, err
	}
	t := teamFromItem(item)
	return &t, nil
}

// DeleteTeam deletes a team, ErrNotFound when there is none; a
// team_changed event records it.
func (s *Teams) DeleteTeam(ctx context.Context, name string, now time.Time) error {
	return retryConditional(ctx, "delete team "+name, func() (write, err error) {
		r, err := s.read(ctx, name)
		if err != nil {
			return nil, err
		}
		if r.team == nil {
			return nil, ErrNotFound
		}
		cnt, err := s.countUpdate(ctx, r, r.count-1, events.TeamChange(name, events.TeamDeleted, r.seq+1, millis(now)))
		if err != nil {
			return nil, err
		}
		_, write = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Delete: &types.Delete{TableName: aws.String(s.table), Key: key(layout.TeamsPK, layout.TeamSK(name)),
				ConditionExpression: aws.String("attribute_exists(pk)")}},
			{Update: cnt},
		}})
		return write, nil
	})
}

// ListTeams returns every team in name order, read strongly consistent.
func (s *Teams) ListTeams(ctx context.Context) ([]Team, error) {
	in := s.prefixQuery(layout.TeamsPK, layout.TeamPrefix)
	in.ConsistentRead = aws.Bool(true)
	out := []Team{}
	err := s.queryAll(ctx, in, func(item map[string]types.AttributeValue) error {
		out = append(out, teamFromItem(item))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: list teams: %w", err)
	}
	return out, nil
}

// teamFromItem decodes a team item.
func teamFromItem(item map[string]types.AttributeValue) Team {
	t := Team{
		Name:       strings.TrimPrefix(getS(item, attrSK), layout.TeamPrefix),
		Members:    []string{},
		ModifyTime: getN(item, "modify_time"),
		Principal:  getS(item, attrPrincipal),
	}
	if l, ok := item[attrMembers].(*types.AttributeValueMemberL); ok {
		for _, m := range l.Value {
			if v, ok := m.(*types.AttributeValueMemberS); ok {
				t.Members = append(t.Members, v.Value)
			}
		}
	}
	return t
}
