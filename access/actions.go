package access

import "fmt"

// Action is what a request does, as named in refusals and the audit.
type Action string

// Actions on a workflow, each needing the role Needs returns.
const (
	Read       Action = "read"
	Push       Action = "push"
	Activate   Action = "activate"
	Deactivate Action = "deactivate"
	Properties Action = "update properties"
	Tag        Action = "tag"
	Delete     Action = "delete"
	SetGrant   Action = "set access"
	Start      Action = "start"
	Stop       Action = "stop"
	Kill       Action = "kill"
	Unblock    Action = "unblock"
	Restart    Action = "restart"
	StepAction Action = "step action"
	Breakpoint Action = "breakpoint"
	OutputData Action = "output data"
	// StartChild is a subworkflow step starting the workflow: its
	// workflow's owners must be operators of the one it starts.
	StartChild Action = "start as a subworkflow"
)

// Admin actions: only the stack's admins may take them.
const (
	ManageTeams     Action = "manage teams"
	ManagePermits   Action = "manage tag permits"
	ManageQueues    Action = "manage job queues"
	ManageTemplates Action = "manage job templates"
)

// Announce is announcing a signal whose name prefix a team claims: only
// its members and admins may.
const Announce Action = "announce signal"

var needs = map[Action]Role{
	Read: Reader,
	Push: Owner, Activate: Owner, Deactivate: Owner, Properties: Owner, Tag: Owner, Delete: Owner, SetGrant: Owner,
	Start: Operator, Stop: Operator, Kill: Operator, Unblock: Operator, Restart: Operator, StepAction: Operator,
	Breakpoint: Operator, OutputData: Operator, StartChild: Operator,
}

var adminActions = map[Action]bool{ManageTeams: true, ManagePermits: true, ManageQueues: true, ManageTemplates: true}

// Needs returns the role a workflow action needs; false for an action that
// is not one (an admin action, or an unknown name).
func Needs(a Action) (Role, bool) {
	r, ok := needs[a]
	return r, ok
}

// IsAdminAction reports whether only admins may take a.
func IsAdminAction(a Action) bool { return adminActions[a] }

// WorkflowActions lists every workflow action.
func WorkflowActions() []Action {
	return []Action{Read, Push, Activate, Deactivate, Properties, Tag, Delete, SetGrant, Start, Stop, Kill,
		Unblock, Restart, StepAction, Breakpoint, OutputData, StartChild}
}

// AdminActions lists every admin action.
func AdminActions() []Action {
	return []Action{ManageTeams, ManagePermits, ManageQueues, ManageTemplates}
}

// Decision is the outcome of Decide.
type Decision struct {
	Allowed bool
	// Need is the role the action needs; Have the role the caller holds.
	Need, Have Role
}

// Decide says whether c may take workflow action a on a workflow with
// grant g. Setting a workflow's grant is also open to admins (who
// otherwise hold no role by being admins). An unknown action is refused.
func Decide(c Caller, g Grant, a Action) Decision {
	need, ok := Needs(a)
	have := g.RoleOf(c)
	if !ok {
		return Decision{Need: Owner + 1, Have: have}
	}
	allowed := have >= need || (a == SetGrant && c.Admin && c.Principal != "")
	return Decision{Allowed: allowed, Need: need, Have: have}
}

// Refusal is the reason a decision refused, for a 403 body and the audit:
// the action, the workflow, the role needed and the role held.
func Refusal(c Caller, workflowID string, a Action, d Decision) string {
	who := c.Principal
	if who == "" {
		who = "an unauthenticated caller"
	}
	if d.Need > Owner {
		return fmt.Sprintf("%s may not %s workflow %q: unknown action", who, a, workflowID)
	}
	return fmt.Sprintf("%s of workflow %q needs the %s role; %s holds %s", a, workflowID, d.Need, who, d.Have)
}

// AdminRefusal is the reason a non-admin is refused admin action a.
func AdminRefusal(c Caller, a Action) string {
	who := c.Principal
	if who == "" {
		who = "an unauthenticated caller"
	}
	return fmt.Sprintf("%s needs an admin; %s is not one", a, who)
}
