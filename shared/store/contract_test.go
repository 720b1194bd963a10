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
// DynamoDB requests, evaluated in process (dynamotest.Dynamo): every
// condition they write decides what the scenarios see.
// integration/contract_test.go runs the same suite on the emulator.
func TestContract(t *testing.T) {
	// Keyed by a delivery key, as the deployed notify stage's rows are.
	key, err := delivery.NewSecret("contract-suite-delivery-key-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	db := dynamotest.New()
	storetest.Run(t, store.New(db, dynamotest.Table), outbox.New(db, dynamotest.Table).WithSecret(key))
}
