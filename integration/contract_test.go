//go:build integration

package integration

import (
	"testing"

	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/store/storetest"
)

// The jobs table's contract (shared/store/storetest) on DynamoDB itself:
// the suite shared/store and shared/store/memstore pass at unit speed,
// here against the deployed table, so the in-process table and the
// in-memory one provably behave as DynamoDB does. Scenarios name their own
// ids, keys and changelists and run fifty years ahead, so the deployed
// sweeper and reconciler never touch their rows.
func TestContractOnDynamoDB(t *testing.T) {
	storetest.Run(t, storetest.Driver{
		Jobs:   func(*testing.T) storetest.Jobs { return env.jobs },
		Outbox: func(*testing.T) *outbox.Outbox { return env.outbox },
	})
}
