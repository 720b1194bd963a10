package memstore_test

import (
	"testing"

	"github.com/criticizer/criticizer/shared/store/memstore"
	"github.com/criticizer/criticizer/shared/store/storetest"
)

// The in-memory table the stages', sweeper's and reconciler's unit tests
// run on passes the same contract as the store on DynamoDB.
func TestContract(t *testing.T) {
	storetest.Run(t, storetest.Driver{Jobs: func(*testing.T) storetest.Jobs { return memstore.New() }})
}
