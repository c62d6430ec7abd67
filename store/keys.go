// Package store owns the DynamoDB table layout: it is the only package that
// builds keys or issues DynamoDB calls. One table holds every item:
//
//	pk                 sk                          item
//	WF#<wf>            HEAD                        workflow head: latest/active version, instance counter, properties,
//	                                               grant ("acl", JSON); listed by the workflow directory (GSI1 partition
//	                                               WORKFLOWS)
//	WF#<wf>            V#<version:10>              a definition version (JSON, compressed: codec.go)
//	WF#<wf>            I#<instance:12>             instance summary: status, latest run, times
//	WF#<wf>            REQ#<request id>            start dedup record -> instance id (expires via ttl)
//	WF#<wf>            RS                          run-strategy slots: "running" = runs holding a slot
//	WF#<wf>            Q#<instance:12>             an instance waiting for a slot (its run in "run")
//	WF#<wf>            BF#<backfill id>            a backfill: its document (cursor, in-flight firings, counts) in
//	                                               "body", version "v" (backfills.go)
//	R#<wf>#<instance>  E#<run:6>#<event id>        pending engine event (inbox); deleted when applied
//	R#<wf>#<instance>  RUN#<run:6>                 run state (engine state, versioned by "v"), outbox in "ob"
//	R#<wf>#<instance>  S#<run:6>#<step>#<attempt:4> step attempt: status, params, outputs, timeline
//	R#<wf>#<instance>  T#<run:6>#<seq:10>          instance timeline entry
//	R#<wf>#<instance>  X#<run:6>#<step>#<attempt:4> a running foreach step's evaluated loop params, once large
//	TEAMS              T#<name>                    a team: "members" (principal ARN patterns), modify_time, principal
//	TEAMS              COUNT                       the teams' counter: how many exist ("n", at most MaxTeams) and the
//	                                               sequence of their changes ("seq"); every team change writes it, with
//	                                               its team_changed event in "ob"
//
// The keys are built by store/internal/layout, which store/memstore shares.
//
// Items that cause work carry an "ob" attribute (the transactional outbox):
// the stream router forwards it to SQS. Step ids and workflow ids cannot
// contain '#', so the delimiters are unambiguous.
package store

// Attribute names. They match resources.Spec; the table's key schema is pk/sk.
const (
	attrPK      = "pk"
	attrSK      = "sk"
	attrVersion = "v"
	attrOutbox  = "ob"
	attrTTL     = "ttl"
	attrBody    = "body"
	attrEnc     = "enc"
	attrStatus  = "status"
	// attrTimeline is a step attempt's list of timeline entries.
	attrTimeline = "tl"
)
