//go:build integration

package integration

import (
	"testing"

	"github.com/criticizer/criticizer/shared/store/storetest"
)

// The jobs table's contract (shared/store/storetest) on DynamoDB itself:
// the suite shared/store passes at unit speed over dynamotest, here against
// the deployed table, so the in-process table provably behaves as DynamoDB
// does. Scenarios name their own ids, keys and changelists and run fifty
// years ahead, so the deployed sweeper and reconciler never touch their rows.
func TestContractOnDynamoDB(t *testing.T) {
	storetest.Run(t, env.jobs, env.outbox)
}
