package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
)

// countingAPI counts the requests made.
type countingAPI struct {
	store.API
	n int
}

func (c *countingAPI) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.n++
	return c.API.PutItem(ctx, in, o...)
}

func (c *countingAPI) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	c.n++
	return c.API.TransactWriteItems(ctx, in, o...)
}

func (c *countingAPI) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.n++
	return c.API.UpdateItem(ctx, in, o...)
}

func row(pk, v string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: "R"}, "v": &types.AttributeValueMemberS{Value: v}}
}

// The rows a last stage's attempt puts through Deferring land with its
// finish, in one request, exactly when the finish does: a put whose key is
// taken keeps the row there, as its PutItem alone would; a finish refused
// (the lease lost) writes none of them; a failed attempt writes them with
// its retry.
func TestDeferredRowsLandWithTheFinish(t *testing.T) {
	ctx := context.Background()
	db := dynamotest.New()
	api := &countingAPI{API: db}
	jobs := store.New(api, dynamotest.Table)
	rows := store.Deferring{API: api}
	now := time.Now().UTC()
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(dynamotest.Table), Item: row("TAKEN", "earlier")}); err != nil {
		t.Fatal(err)
	}
	lease := func(owner string) job.Lease { return job.Lease{Owner: owner, Now: now, TTL: time.Minute} }
	toNotify := func(id string, cl int64) {
		t.Helper()
		j := job.New(id, "key-"+id, cl, 1, now, time.Minute)
		if err := jobs.Create(ctx, j, &store.Idempotency{Key: j.IdempotencyKey, JobID: id, CreatedAt: j.CreatedAt}); err != nil {
			t.Fatal(err)
		}
		for _, st := range []domain.Stage{domain.StageFetch, domain.StageLLM, domain.StageNotify} {
			if _, err := jobs.Claim(ctx, id, st, lease("o-"+id), 5); err != nil {
				t.Fatal(err)
			}
			if st == domain.StageNotify {
				return
			}
			if _, err := jobs.Complete(ctx, id, st, lease("o-"+id), job.Result{}, time.Minute); err != nil {
				t.Fatal(err)
			}
		}
	}
	attempt := func(id string, puts ...map[string]types.AttributeValue) context.Context {
		t.Helper()
		actx := store.Defer(ctx)
		for _, it := range puts {
			if _, err := rows.PutItem(actx, &dynamodb.PutItemInput{TableName: aws.String(dynamotest.Table), Item: it,
				ConditionExpression: aws.String("attribute_not_exists(pk)")}); err != nil {
				t.Fatal(err)
			}
		}
		return actx
	}
	get := func(pk string) string {
		t.Helper()
		out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(dynamotest.Table), Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: "R"}}})
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := out.Item["v"].(*types.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}

	toNotify("lost", 7)
	actx := attempt("lost", row("LOST", "x"))
	if _, err := jobs.Complete(actx, "lost", domain.StageNotify, lease("someone-else"), job.Result{}, time.Minute); !errors.Is(err, job.ErrLeaseLost) {
		t.Fatalf("finish by another owner: %v, want the lease lost", err)
	}
	if v := get("LOST"); v != "" {
		t.Errorf("a refused finish wrote its attempt's row (%q)", v)
	}

	// A failed attempt keeps what it recorded, as it did when each row was
	// written at once.
	toNotify("retry", 9)
	actx = attempt("retry", row("RETRIED", "r"))
	if _, err := jobs.Retry(actx, "retry", domain.StageNotify, lease("o-retry"), job.FailureInfo{Class: failure.Upstream5xx, Message: "x"}, time.Second); err != nil {
		t.Fatal(err)
	}
	if v := get("RETRIED"); v != "r" {
		t.Errorf("a retried attempt's row = %q, want it written", v)
	}

	toNotify("j", 8)
	actx = attempt("j", row("A", "a"), row("B", "b"), row("TAKEN", "later"))
	if api.n = 0; get("A") != "" {
		t.Fatal("a deferred row was written before the finish")
	}
	done, err := jobs.Complete(actx, "j", domain.StageNotify, lease("o-j"), job.Result{}, time.Minute)
	if err != nil || done.State != job.Succeeded {
		t.Fatalf("finish: %v, %+v", err, done)
	}
	if got, _ := jobs.Get(ctx, "j"); got.State != job.Succeeded {
		t.Errorf("job after the finish: %s", got.State)
	}
	for pk, want := range map[string]string{"A": "a", "B": "b", "TAKEN": "earlier"} {
		if v := get(pk); v != want {
			t.Errorf("row %s = %q, want %q", pk, v, want)
		}
	}
	// One transaction, and one more after the taken key's put was dropped.
	if api.n > 2 {
		t.Errorf("the finish and its rows took %d requests", api.n)
	}
	// Its retry (the answer lost) is recognised as applied.
	if _, err := jobs.Complete(actx, "j", domain.StageNotify, lease("o-j"), job.Result{}, time.Minute); err != nil {
		t.Errorf("retried finish: %v", err)
	}
}
