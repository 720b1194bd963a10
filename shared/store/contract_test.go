package store_test

import (
	"testing"

	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
	"github.com/criticizer/criticizer/shared/store/storetest"
)

// The jobs table's contract against the store's and the outbox's real
// DynamoDB requests, evaluated in process (storetest.Dynamo): every
// condition they write decides what the scenarios see.
// integration/contract_test.go runs the same suite on the emulator.
func TestContract(t *testing.T) {
	storetest.Run(t, storetest.Driver{
		Jobs:   func(*testing.T) storetest.Jobs { return store.New(dynamotest.New(), dynamotest.Table) },
		Outbox: func(*testing.T) *outbox.Outbox { return outbox.New(dynamotest.New(), dynamotest.Table) },
	})
}
