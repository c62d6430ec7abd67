package memstore_test

import (
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/store/memstore"
	"github.com/maestro-serverless/maestro/store/storetest"
)

// The memstore implements every store interface of the orchestrator.
var (
	_ orchestrator.DefinitionStore = (*memstore.Definitions)(nil)
	_ orchestrator.InstanceStore   = (*memstore.Instances)(nil)
	_ orchestrator.RunStore        = (*memstore.Runs)(nil)
	_ orchestrator.AttemptStore    = (*memstore.Attempts)(nil)
	_ orchestrator.SignalStore     = (*memstore.Signals)(nil)
	_ orchestrator.GateStore       = (*memstore.Gates)(nil)
	_ orchestrator.TaskStore       = (*memstore.Tasks)(nil)
	_ orchestrator.SweepStore      = (*memstore.Sweeps)(nil)
	_ orchestrator.TemplateStore   = (*memstore.Templates)(nil)
	_ orchestrator.TeamStore       = (*memstore.Teams)(nil)
	_ orchestrator.BackfillStore   = (*memstore.Backfills)(nil)
)

// stores returns the orchestrator's view of s.
func stores(s *memstore.Store) orchestrator.Stores {
	return orchestrator.Stores{Definitions: s.Definitions, Instances: s.Instances, Runs: s.Runs, Attempts: s.Attempts,
		Signals: s.Signals, Gates: s.Gates, Tasks: s.Tasks, Sweeps: s.Sweeps, Templates: s.Templates, Teams: s.Teams, Backfills: s.Backfills}
}

// TestContract holds the memstore to the store contract.
func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) orchestrator.Stores {
		return stores(memstore.New(memstore.Options{Now: now}))
	})
}
