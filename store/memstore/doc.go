// Package memstore is an in-memory implementation of the store interfaces
// the orchestrator declares (orchestrator.Stores), for unit tests that run
// without an emulator. It behaves as package store's DynamoDB store does —
// the same return values, sentinel errors, conditional writes, atomicity,
// orderings, cursors, sweep index and due times — and the contract suite
// in store/storetest holds the two to each other.
//
//	s := memstore.New(memstore.Options{Now: clock.Now})
//	stores := orchestrator.Stores{Definitions: s.Definitions, Instances: s.Instances, Runs: s.Runs,
//		Attempts: s.Attempts, Signals: s.Signals, Gates: s.Gates, Tasks: s.Tasks, Sweeps: s.Sweeps,
//		Templates: s.Templates, Teams: s.Teams, Backfills: s.Backfills}
//
// It keeps items under the keys package store writes, each as a Go value
// holding what the DynamoDB item's attributes hold, so that a query of a
// key range returns what DynamoDB's returns, in the same order (and with
// the same cursors: DynamoDB ends a page that reached its limit with a
// cursor even when nothing follows). A write is applied under one mutex,
// all of it or nothing, with DynamoDB's condition semantics: a failed
// condition is reported for every write of a transaction that failed one,
// and a request DynamoDB refuses as malformed (a nil body, two writes of
// one item, a key too long) is refused. Where package store encodes
// privately (compressed bodies, the outbox), the memstore keeps the
// decoded values: what is read back is the same, the bytes are not.
//
// What differs from the DynamoDB store:
//
//   - Item sizes are estimated: bodies compressed with deflate without
//     package store's private dictionary, which saves a few hundred bytes
//     more. An item within that of DynamoDB's limit may be refused here and
//     not there; a *store.ItemTooLargeError's Bytes is the estimate.
//   - store.Pages cannot be built outside package store: a RunRecord's
//     Pages is always empty, and a commit's Pages is not read. A run's state
//     is split into pages as package store splits it (what LoadRun returns
//     of a paged state is its merge: fields in key order, values compacted),
//     over the pages its run item names — the ones a caller read at the
//     version its commit is conditioned on, as the orchestrator passes them.
//   - A store.WorkflowHead's version is unexported; the memstore sets and
//     reads it by reflection (headversion.go), so UpdateProperties takes a
//     head the memstore returned, or a copy, as package store does.
//   - Every read is strongly consistent, the workflow directory's and the
//     sweep index's included (DynamoDB's GSI and eventually consistent
//     reads may lag a write).
//   - Sweep index items due at the same millisecond are listed in key
//     order; DynamoDB's index leaves their order unspecified.
//   - Nothing expires: DynamoDB deletes items past their TTL (start request
//     ids after 30 days, task tokens after 121) at some time after it.
//   - There is no stream: outboxes are not kept (the messages a commit, a
//     worker's end or a purge round would send are not observable).
//   - DynamoDB's 1 MB limit on a query page and 4 MB on a transaction are
//     not modelled: a purge of a workflow whose 100 items pass 1 MB counts
//     its rounds differently.
//   - Operations package store makes of several requests (a push's read
//     and write, a purge, an announce's counter and write, a commit's pages
//     and its transaction) hold the lock for fewer steps: they interleave
//     less with concurrent callers, never in a way the store excludes.
package memstore
