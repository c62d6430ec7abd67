package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/maestro-serverless/maestro/access"
	"github.com/maestro-serverless/maestro/caller"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/principal"
	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/teamrights"
)

// AccessSettings are the stack's authorization settings (docs/security.md).
type AccessSettings struct {
	// Enforce turns the checks on. The deployed stack always enforces;
	// the local stack does when it verifies signatures (it has
	// credentials), and stays open on loopback otherwise.
	Enforce bool
	// Admins are principal ARN patterns of the stack's admins: they manage
	// teams, tag permits, job queues and job templates, and may set any
	// workflow's access.
	Admins []string
	// PrivateWorkflows makes the readers of a new workflow nobody but its
	// owners and operators (default: everyone).
	PrivateWorkflows bool
	// SignalPrefixes, when set, limits announcing a signal: a name starting
	// with one of a team's prefixes may be announced only by that team's
	// members (and admins); names no prefix claims stay open.
	SignalPrefixes map[string][]string
	// TeamRights are the AWS rights each team's steps launch with: a push
	// whose steps ask for more than its owners' team has is refused.
	TeamRights teamrights.Config
}

// Access is the authorization role: who the caller is, whether it may
// take an action on a workflow, workflows' grants and the teams.
type Access struct {
	*core
	settings AccessSettings
}

// teamsKey is the context key of a request's teamsMemo.
type teamsKey struct{}

// teamsMemo keeps the teams one request read: at most once, and only when
// one of its checks needs them (a task report or an open signal needs
// none).
type teamsMemo struct {
	once  sync.Once
	teams []store.Team
	err   error
}

// CallerView is GET /api/v3/caller's answer.
type CallerView struct {
	access.Caller
	// Enforced is false when the stack runs open (every check passes).
	Enforced bool `json:"enforced"`
}

// Caller returns who makes the request of ctx: its principal (package
// caller), its teams and whether it is an admin. The teams are read once
// per request context: WithCaller keeps them.
func (a *Access) Caller(ctx context.Context) (*CallerView, error) {
	c, err := a.caller(ctx)
	if err != nil {
		return nil, err
	}
	if c.Teams == nil {
		c.Teams = []string{}
	}
	return &CallerView{Caller: c, Enforced: a.settings.Enforce}, nil
}

// WithCaller returns ctx ready to remember the teams its checks read, so
// that one request reads them at most once, and only if a check needs
// them. It never fails; the error is kept for the interface's callers.
func (a *Access) WithCaller(ctx context.Context) (context.Context, error) {
	if !a.settings.Enforce {
		return ctx, nil
	}
	if _, ok := ctx.Value(teamsKey{}).(*teamsMemo); ok {
		return ctx, nil
	}
	return context.WithValue(ctx, teamsKey{}, &teamsMemo{}), nil
}

// teams reads every team, once per request context made by WithCaller.
func (a *Access) teams(ctx context.Context) ([]store.Team, error) {
	m, ok := ctx.Value(teamsKey{}).(*teamsMemo)
	if !ok {
		return a.store.Teams.ListTeams(ctx)
	}
	m.once.Do(func() { m.teams, m.err = a.store.Teams.ListTeams(ctx) })
	return m.teams, m.err
}

func (a *Access) caller(ctx context.Context) (access.Caller, error) {
	p := caller.From(ctx)
	c := access.Caller{Principal: p}
	if p == "" {
		return c, nil
	}
	c.Admin = a.isAdmin(p)
	teams, err := a.teams(ctx)
	if err != nil {
		return c, Internal(fmt.Errorf("read teams: %w", err))
	}
	c.Teams = access.TeamsOf(p, teamsOf(teams))
	if len(c.Teams) > access.MaxTeamsPerCaller {
		c.Teams = c.Teams[:access.MaxTeamsPerCaller]
	}
	return c, nil
}

func (a *Access) isAdmin(p string) bool {
	return slices.ContainsFunc(a.settings.Admins, func(pattern string) bool {
		ok, err := principal.Match(pattern, p)
		return err == nil && ok
	})
}

func teamsOf(ts []store.Team) []access.Team {
	out := make([]access.Team, len(ts))
	for i, t := range ts {
		out[i] = access.Team{Name: t.Name, Members: t.Members}
	}
	return out
}

// grantOf returns workflow wf's grant. An inline workflow (a loop's
// iterations) has the grant of the workflow whose definition holds its
// steps. exists is false when there is no such workflow. A workflow
// pushed before grants existed has no owners or operators and everyone
// as readers: an admin gives it owners (PUT .../access).
func (a *Access) grantOf(ctx context.Context, wf string) (g access.Grant, exists bool, err error) {
	for range model.WorkflowDepthLimit + 1 {
		if !model.IsInlineWorkflowID(wf) {
			break
		}
		owner, ok, err := a.inlineOwner(ctx, wf)
		if err != nil || !ok {
			return g, false, err
		}
		wf = owner
	}
	head, err := a.store.Definitions.GetHead(ctx, wf)
	if errors.Is(err, store.ErrNotFound) {
		return g, false, nil
	}
	if err != nil {
		return g, false, Internal(err)
	}
	g, err = DecodeGrant(head)
	return g, err == nil, err
}

// DecodeGrant reads a head's grant. A head written before grants existed
// has none: no owners or operators, everyone reads.
func DecodeGrant(head *store.WorkflowHead) (access.Grant, error) {
	if len(head.Access) == 0 {
		return access.Grant{Readers: []string{access.Everyone}}.Normalized(), nil
	}
	var g access.Grant
	if err := json.Unmarshal(head.Access, &g); err != nil {
		return g, Internal(fmt.Errorf("decode the access of %s: %w", head.WorkflowID, err))
	}
	return g.Normalized(), nil
}

// inlineOwner is the workflow whose definition holds the steps of inline
// workflow wf: its first iteration's parent's owner.
func (a *Access) inlineOwner(ctx context.Context, wf string) (string, bool, error) {
	inst, err := a.store.Instances.GetInstance(ctx, wf, 1)
	if errors.Is(err, store.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, Internal(err)
	}
	_, st, err := a.loadRun(ctx, wf, 1, inst.RunID)
	if err != nil {
		return "", false, err
	}
	if st.Parent == nil {
		return "", false, nil
	}
	if st.Parent.Owner != "" {
		return st.Parent.Owner, true, nil
	}
	return st.Parent.WorkflowID, true, nil
}

// Authorize refuses, with a 403 naming the action, the workflow and the
// role it needs, a caller who may not take action act on workflow wf; a
// workflow that does not exist is answered 404 for every action but read
// (whose handler answers it). It passes everything when the stack does
// not enforce.
func (a *Access) Authorize(ctx context.Context, wf string, act access.Action) error {
	if !a.settings.Enforce {
		return nil
	}
	c, err := a.caller(ctx)
	if err != nil {
		return err
	}
	if c.Principal == "" {
		return a.refuse(ctx, c, wf, act, "no authenticated principal")
	}
	g, exists, err := a.grantOf(ctx, wf)
	if err != nil {
		return err
	}
	if !exists {
		if act == access.Read {
			return nil
		}
		return NotFound("workflow %s not found", wf)
	}
	d := access.Decide(c, g, act)
	if !d.Allowed {
		return a.refuse(ctx, c, wf, act, access.Refusal(c, wf, act, d))
	}
	return nil
}

// AuthorizeAdmin refuses a caller who is not an admin.
func (a *Access) AuthorizeAdmin(ctx context.Context, act access.Action) error {
	if !a.settings.Enforce {
		return nil
	}
	c, err := a.caller(ctx)
	if err != nil {
		return err
	}
	if !c.Admin {
		return a.refuse(ctx, c, "", act, access.AdminRefusal(c, act))
	}
	return nil
}

// CanRead reports whether the caller may read the workflow of head (a
// listing's filter); always when the stack does not enforce.
func (a *Access) CanRead(ctx context.Context, head *store.WorkflowHead) (bool, error) {
	if !a.settings.Enforce {
		return true, nil
	}
	c, err := a.caller(ctx)
	if err != nil {
		return false, err
	}
	g, err := DecodeGrant(head)
	if err != nil {
		return false, err
	}
	return g.RoleOf(c) >= access.Reader, nil
}

// refuse audits a refusal — a log line with the principal, the action
// and the workflow, and the AccessRefused metric — and returns its 403.
func (a *Access) refuse(ctx context.Context, c access.Caller, wf string, act access.Action, msg string) error {
	a.audit(ctx, c.Principal, wf, act, slog.String("reason", msg))
	return &Error{Status: http.StatusForbidden, Message: msg}
}

// audit logs a refusal of act on workflow wf to principal, with why, and
// counts it as the AccessRefused metric.
func (a *Access) audit(ctx context.Context, principal, wf string, act access.Action, why slog.Attr) {
	a.log.LogAttrs(ctx, slog.LevelWarn, "access refused", slog.String("principal", principal),
		slog.String("action", string(act)), slog.String("workflow_id", wf), why)
	if a.metrics != nil {
		a.metrics.EmitWith("AccessRefused", 1, "Count", map[string]string{"principal": principal, "workflow_id": wf},
			"Action", string(act))
	}
}

// AccessView is a workflow's grant and the caller's role on it.
type AccessView struct {
	WorkflowID string `json:"workflow_id"`
	access.Grant
	// Role is the caller's role on the workflow.
	Role     string `json:"role"`
	Enforced bool   `json:"enforced"`
}

// GetAccess returns workflow wf's grant and the caller's role on it: to
// its readers, and to admins, who may set any grant and so read it.
func (a *Access) GetAccess(ctx context.Context, wf string) (*AccessView, error) {
	c, err := a.caller(ctx)
	if err != nil {
		return nil, err
	}
	if !c.Admin {
		if err := a.Authorize(ctx, wf, access.Read); err != nil {
			return nil, err
		}
	}
	g, exists, err := a.grantOf(ctx, wf)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, NotFound("workflow %s not found", wf)
	}
	return a.view(ctx, wf, g)
}

func (a *Access) view(ctx context.Context, wf string, g access.Grant) (*AccessView, error) {
	c, err := a.caller(ctx)
	if err != nil {
		return nil, err
	}
	role := g.RoleOf(c)
	if !a.settings.Enforce {
		role = access.Owner
	}
	return &AccessView{WorkflowID: wf, Grant: g.Normalized(), Role: role.String(), Enforced: a.settings.Enforce}, nil
}

// PutAccess replaces workflow wf's grant: its owners' or an admin's
// action. The body is {"owners": [...], "operators": [...], "readers":
// [...]}, each entry "*" (not in owners), "team:<name>" of an existing
// team, or an IAM principal ARN pattern. The change is published as an
// access_changed event.
func (a *Access) PutAccess(ctx context.Context, wf string, body []byte) (*AccessView, error) {
	if model.IsInlineWorkflowID(wf) {
		return nil, Invalid("bad workflow", fmt.Sprintf("workflow_id: %s is a loop's inline workflow; its access is its workflow's", wf))
	}
	g, err := parseGrant(body)
	if err != nil {
		return nil, err
	}
	if err := a.Authorize(ctx, wf, access.SetGrant); err != nil {
		return nil, err
	}
	if err := a.knownTeams(ctx, g); err != nil {
		return nil, err
	}
	if err := a.store.Definitions.PutAccess(ctx, wf, mustJSON(g), a.now()); err != nil {
		var tl *store.ItemTooLargeError
		if errors.As(err, &tl) {
			return nil, refusedIfTooLarge(err, "invalid access", "body")
		}
		return nil, notFoundOr(err, "workflow %s not found", wf)
	}
	a.log.LogAttrs(ctx, slog.LevelInfo, "access changed", slog.String("principal", caller.From(ctx)),
		slog.String("workflow_id", wf), slog.Any("access", g))
	return a.view(ctx, wf, g)
}

// parseGrant reads and checks a grant body strictly.
func parseGrant(body []byte) (access.Grant, error) {
	var g access.Grant
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&g); err != nil {
		return g, Invalid("invalid access", "body: "+err.Error())
	}
	if dec.More() {
		return g, Invalid("invalid access", "body: one JSON object expected")
	}
	if probs := g.Validate(); len(probs) > 0 {
		return g, Invalid("invalid access", probs...)
	}
	return g.Normalized(), nil
}

// knownTeams refuses a grant naming a team that does not exist: a typo
// would silently grant nobody, or the team created later.
func (a *Access) knownTeams(ctx context.Context, g access.Grant) error {
	names := g.Teams()
	if len(names) == 0 {
		return nil
	}
	teams, err := a.teams(ctx)
	if err != nil {
		return Internal(err)
	}
	var probs []string
	for _, n := range names {
		if !slices.ContainsFunc(teams, func(t store.Team) bool { return t.Name == n }) {
			probs = append(probs, fmt.Sprintf("team:%s: no such team (an admin creates it: PUT /api/v3/teams/%s)", n, n))
		}
	}
	if len(probs) > 0 {
		return Invalid("invalid access", probs...)
	}
	return nil
}

// newGrant is the grant of a workflow the caller pushes first: its teams
// (or itself) own and operate it, everyone reads it unless the stack
// makes new workflows private. Without enforcement (an open local stack)
// a pusher with no principal gets none: the workflow keeps no grant.
func (a *Access) newGrant(ctx context.Context) ([]byte, error) {
	c, err := a.caller(ctx)
	if err != nil || c.Principal == "" {
		return nil, err
	}
	return mustJSON(access.Default(c, a.settings.PrivateWorkflows)), nil
}

// pushCheck is the check a push makes on the head it writes over: the
// caller must own an existing workflow. It runs on every write attempt of
// the push, so a concurrent change of the grant is seen.
func (a *Access) pushCheck(ctx context.Context, wf string) func(*store.WorkflowHead, bool) error {
	if !a.settings.Enforce {
		return nil
	}
	return func(head *store.WorkflowHead, exists bool) error {
		c, err := a.caller(ctx)
		if err != nil {
			return err
		}
		if c.Principal == "" {
			return a.refuse(ctx, c, wf, access.Push, "no authenticated principal")
		}
		if !exists {
			return nil
		}
		g, err := DecodeGrant(head)
		if err != nil {
			return err
		}
		if d := access.Decide(c, g, access.Push); !d.Allowed {
			return a.refuse(ctx, c, wf, access.Push, access.Refusal(c, wf, access.Push, d)+
				" (a workflow id belongs to its owners: push under another id)")
		}
		return nil
	}
}

// childRefusal says why workflow caller's owners may not start workflow
// callee as a subworkflow ("" when they may, or when the stack does not
// enforce, or callee does not exist: the start reports that).
func (a *Access) childRefusal(ctx context.Context, callerOwners []string, callerWF, callee string) (string, error) {
	if !a.settings.Enforce {
		return "", nil
	}
	g, exists, err := a.grantOf(ctx, callee)
	if err != nil || !exists {
		return "", err
	}
	missing := access.Covers(g, callerOwners)
	if len(missing) == 0 {
		return "", nil
	}
	return fmt.Sprintf("%s of workflow %q by workflow %q needs its owners (%s) to be operators of %q",
		access.StartChild, callee, callerWF, strings.Join(missing, ", "), callee), nil
}

// ChildAllowed is the run-time check of a subworkflow step: the owners of
// the workflow whose run starts the child (callerWF, resolved through
// inline workflows) must operate the child's workflow. A refusal is
// audited and returned as the reason the step fails.
func (a *Access) ChildAllowed(ctx context.Context, callerWF, callee string) (string, error) {
	if !a.settings.Enforce {
		return "", nil
	}
	g, exists, err := a.grantOf(ctx, callerWF)
	if err != nil || !exists {
		return "", err
	}
	msg, err := a.childRefusal(ctx, g.Owners, callerWF, callee)
	if err != nil || msg == "" {
		return msg, err
	}
	a.audit(ctx, "workflow:"+callerWF, callee, access.StartChild, slog.String("reason", msg))
	return msg, nil
}

// AuthorizeSignal refuses announcing signal name when a team claims its
// prefix (AccessSettings.SignalPrefixes) and the caller is neither in that
// team nor an admin.
func (a *Access) AuthorizeSignal(ctx context.Context, name string) error {
	if !a.settings.Enforce || len(a.settings.SignalPrefixes) == 0 {
		return nil
	}
	var claimants []string
	for team, prefixes := range a.settings.SignalPrefixes {
		if slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(name, p) }) {
			claimants = append(claimants, team)
		}
	}
	if len(claimants) == 0 {
		return nil
	}
	c, err := a.caller(ctx)
	if err != nil {
		return err
	}
	if c.Admin || slices.ContainsFunc(claimants, func(t string) bool { return slices.Contains(c.Teams, t) }) {
		return nil
	}
	slices.Sort(claimants)
	return a.refuse(ctx, c, "", access.Announce, fmt.Sprintf("announcing signal %q needs membership of team %s (its name prefix is theirs); %s is in none",
		name, strings.Join(claimants, " or "), c.Principal))
}

// checkPush refuses a push by a caller who does not own the workflow
// (403; the store checks again on the head it writes over), and (400) a
// push whose steps its owners may not run — the owners the workflow will
// have: the stored grant's, or the pusher's default for a new workflow:
//   - a subworkflow step naming, as a literal subworkflow_id, a workflow
//     those owners may not operate (one given by an expression, or naming
//     a workflow that does not exist yet, is checked when the step runs:
//     ChildAllowed);
//   - where the stack maps teams to AWS rights, an Ecs, Kubernetes,
//     Notebook, Batch or Lambda step asking for more than the owners'
//     team has (teamrights.Config.CheckWorkflow; launches check again).
//
// Nothing is checked when the stack does not enforce access.
func (a *Access) checkPush(ctx context.Context, wf string, w *model.Workflow) error {
	if !a.settings.Enforce {
		return nil
	}
	var grant access.Grant
	head, err := a.store.Definitions.GetHead(ctx, wf)
	switch {
	case err == nil:
		if err := a.pushCheck(ctx, wf)(head, true); err != nil {
			return err
		}
		if grant, err = DecodeGrant(head); err != nil {
			return err
		}
	case errors.Is(err, store.ErrNotFound):
		if err := a.pushCheck(ctx, wf)(nil, false); err != nil {
			return err
		}
		c, err := a.caller(ctx)
		if err != nil {
			return err
		}
		grant = access.Default(c, a.settings.PrivateWorkflows)
	default:
		return Internal(err)
	}
	if probs := a.settings.TeamRights.CheckWorkflow(w, grant); len(probs) > 0 {
		a.auditPush(ctx, wf, access.Push, probs)
		return Invalid("a step asks for more AWS rights than its owners' team has", probs...)
	}
	return a.pushChildren(ctx, wf, grant.Owners, w.Steps)
}

// auditPush logs and counts a push refused for what its steps ask.
func (a *Access) auditPush(ctx context.Context, wf string, act access.Action, probs []string) {
	a.audit(ctx, caller.From(ctx), wf, act, slog.Any("reasons", probs))
}

// pushChildren refuses (400) a push whose subworkflow steps name, as a
// literal subworkflow_id, a workflow owners may not operate.
func (a *Access) pushChildren(ctx context.Context, wf string, owners []string, steps []model.Step) error {
	var probs []string
	var walk func(path string, steps []model.Step) error
	walk = func(path string, steps []model.Step) error {
		for i := range steps {
			s := &steps[i]
			at := fmt.Sprintf("%s[%d]", path, i)
			if len(s.Steps) > 0 {
				if err := walk(at+".steps", s.Steps); err != nil {
					return err
				}
			}
			if s.Kind != model.KindSubworkflow {
				continue
			}
			def := s.Params.Defs["subworkflow_id"]
			callee, ok := "", false
			if def != nil && def.HasValue && def.Expression == "" {
				callee, ok = def.Value.(string)
			}
			if !ok || callee == "" || callee == wf {
				continue
			}
			msg, err := a.childRefusal(ctx, owners, wf, callee)
			if err != nil {
				return err
			}
			if msg != "" {
				probs = append(probs, fmt.Sprintf("%s (%s).params.subworkflow_id: %s", at, s.ID, msg))
			}
		}
		return nil
	}
	if err := walk("workflow.steps", steps); err != nil {
		return err
	}
	if len(probs) > 0 {
		a.auditPush(ctx, wf, access.StartChild, probs)
		return Invalid("a subworkflow step starts a workflow its owners may not operate", probs...)
	}
	return nil
}
