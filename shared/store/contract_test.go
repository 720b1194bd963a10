package store_test

import (
	"testing"

	"github.com/criticizer/criticizer/shared/delivery"
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
		Jobs: func(*testing.T) storetest.Jobs { return store.New(dynamotest.New(), dynamotest.Table) },
		// Keyed by a delivery key, as the deployed notify stage's rows are.
		Outbox: func(t *testing.T) *outbox.Outbox {
			key, err := delivery.NewSecret("contract-suite-delivery-key-0123456789")
			if err != nil {
				t.Fatal(err)
			}
			return outbox.New(dynamotest.New(), dynamotest.Table).WithSecret(key)
		},
	})
}
