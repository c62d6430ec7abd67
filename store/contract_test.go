package store_test

import (
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/store/storetest"
)

// TestContract holds the DynamoDB store to the store contract the
// memstore is held to (store/storetest), on the emulator.
func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) orchestrator.Stores {
		return orchestrator.StoresOf(newStoreWith(t, store.Options{Now: now}))
	})
}
