package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/google/uuid"

	"github.com/criticizer/criticizer/internal/devstack"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/store"
)

// The scale benchmark: what one scheduled sweeper run reads as the table's
// finished history grows. It deploys the stack on the emulator with every
// function's AWS calls through a wireCounter, runs the sample changelist
// through the real pipeline, clones the items that job left (job, gates,
// idempotency record, delivery rows, ledger, evidence) to N rows of history,
// and invokes the deployed sweeper once per N.

// scalePass is one measured invocation.
type scalePass struct {
	Rows     int // items in the table when it ran
	Event    string
	Read     int
	Requests map[string]int
	Took     time.Duration
	Result   string // the function's own report
}

func runScale(ctx context.Context, l *devstack.Local, wire *wireCounter, sizes []int, out io.Writer) error {
	ddb, fn := dynamodb.NewFromConfig(l.AWS), lambda.NewFromConfig(l.AWS)
	table, sweeper := l.Outputs["JobsTableName"], l.Outputs["SweeperFunctionName"]
	if _, err := runReview(ctx, l, 12345, "bench-scale-12345-v1", []string{"reviewers@example.com"}); err != nil {
		return err
	}
	tmpl, err := scanAll(ctx, ddb, table)
	if err != nil {
		return err
	}
	// Unmeasured runs: the cold start and the sample job's e-mail verified
	// once its completion window has passed, so measured runs find only history.
	if err := settleSample(ctx, fn, sweeper, wire); err != nil {
		return err
	}
	fmt.Fprintln(out, scaleHeader)
	rows := 0 // history rows seeded
	for _, n := range sizes {
		if n > rows {
			if err := seed(ctx, ddb, table, tmpl, rows, n-rows); err != nil {
				return err
			}
			rows = n
		}
		if got, err := countItems(ctx, ddb, table); err != nil || got < rows {
			return fmt.Errorf("the table holds %d items, want at least %d of history: %v", got, rows, err)
		}
		p, err := invokeOnce(ctx, fn, sweeper, "{}", wire, rows)
		if err != nil {
			return fmt.Errorf("%d rows, sweep: %w", rows, err)
		}
		renderScale(out, p)
		if p, err = retentionRound(ctx, ddb, fn, table, sweeper, wire, rows); err != nil {
			return fmt.Errorf("%d rows, retention: %w", rows, err)
		}
		renderScale(out, p)
	}
	return nil
}

// newChange copies the depot's sample changelist 12345 to changelist n,
// each review of the request benchmark a version 1 of its own (a second
// version 1 of one changelist is refused as stale).
func newChange(l *devstack.Local, n int64) error {
	dir := filepath.Join(l.Depot, "changes")
	b, err := os.ReadFile(filepath.Join(dir, "12345.json"))
	if err != nil {
		return err
	}
	var fx map[string]any
	if err := json.Unmarshal(b, &fx); err != nil {
		return err
	}
	fx["change"] = n
	out, err := json.Marshal(fx)
	if err != nil {
		return err
	}
	// Written aside and renamed: a p4 stand-in indexing the folder never
	// reads a half-written change.
	tmp := filepath.Join(dir, fmt.Sprintf(".%d.json.tmp", n))
	if err := os.WriteFile(tmp, out, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, fmt.Sprintf("%d.json", n)))
}

// runReview posts a signed webhook for the sample changelist and waits until
// its job has succeeded, reading the job with the bench's own client (not
// through the wireCounter, and through no function, so the wait costs the
// count nothing).
func runReview(ctx context.Context, l *devstack.Local, cl int64, key string, recipients []string) (*job.Job, error) {
	body, err := json.Marshal(map[string]any{"changelist_id": cl, "review_version": 1, "idempotency_key": key,
		"source": "p4-trigger", "recipients": recipients, "requested_by": "bench"})
	if err != nil {
		return nil, err
	}
	const path = "/webhooks/changelist"
	code, b, err := l.Call(ctx, http.MethodPost, path, body)
	if err == nil && code/100 != 2 {
		err = fmt.Errorf("POST %s: HTTP %d: %s", path, code, b)
	}
	if err != nil {
		return nil, err
	}
	id := devstack.CreatedJob(b)
	if id == "" {
		return nil, fmt.Errorf("webhook answer %s: no job id", b)
	}
	jobs := store.New(dynamodb.NewFromConfig(l.AWS), l.Outputs["JobsTableName"])
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) { // polling an external process
		j, err := jobs.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		switch j.State {
		case job.Succeeded:
			return j, nil
		case job.Failed:
			return nil, fmt.Errorf("job %s failed at %s", j.ID, j.Stage)
		}
	}
	return nil, fmt.Errorf("job %s did not finish in 3 minutes", id)
}

// scanAll reads every item of the table (the bench's own client, not counted).
func scanAll(ctx context.Context, ddb *dynamodb.Client, table string) ([]map[string]types.AttributeValue, error) {
	var items []map[string]types.AttributeValue
	for p := dynamodb.NewScanPaginator(ddb, &dynamodb.ScanInput{TableName: &table}); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			if s, _ := it["pk"].(*types.AttributeValueMemberS); s != nil && s.Value == "OUTBOX#PASS" {
				continue // the sweeper's own progress, not history
			}
			items = append(items, it)
		}
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("the sample job left no items in %s", table)
	}
	return items, nil
}

// invokeOnce runs the deployed sweeper with event and takes the wire's counts.
func invokeOnce(ctx context.Context, fn *lambda.Client, name, event string, wire *wireCounter, rows int) (scalePass, error) {
	wire.take()
	start := time.Now()
	out, err := fn.Invoke(ctx, &lambda.InvokeInput{FunctionName: &name, Payload: []byte(event)})
	took := time.Since(start)
	if err != nil {
		return scalePass{}, fmt.Errorf("invoke the sweeper: %w", err)
	}
	if out.FunctionError != nil {
		return scalePass{}, fmt.Errorf("the sweeper failed: %s: %s", aws.ToString(out.FunctionError), out.Payload)
	}
	read, calls := wire.take()
	reqs := map[string]int{}
	for c, n := range calls {
		if op, ok := strings.CutPrefix(c.Op, "dynamodb."); ok {
			reqs[op] += n
		}
	}
	return scalePass{Rows: rows, Event: event, Read: read, Requests: reqs, Took: took, Result: string(out.Payload)}, nil
}

// scaleVerbose prints the sweeper's answers (-scale-verbose).
var scaleVerbose bool

// settleSample runs the sweeper until it has verified the sample job's
// e-mail against the SMTP stand-in's log (after the local 60 s window).
func settleSample(ctx context.Context, fn *lambda.Client, sweeper string, wire *wireCounter) error {
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Second) { // polling the deployed function
		p, err := invokeOnce(ctx, fn, sweeper, "{}", wire, 0)
		if err != nil {
			return err
		}
		var res struct{ Reconcile struct{ Verified int } }
		if err := json.Unmarshal([]byte(p.Result), &res); err != nil {
			return fmt.Errorf("the sweeper's answer %s: %w", p.Result, err)
		}
		if res.Reconcile.Verified > 0 {
			return nil
		}
	}
	return fmt.Errorf("the sample job's e-mail was not verified within 3 minutes")
}

// retentionRound measures a whole round of the retention check: its saved
// round is dropped (the bench's own client) so one starts now, and the
// hourly event is sent until the round completes.
func retentionRound(ctx context.Context, ddb *dynamodb.Client, fn *lambda.Client, table, sweeper string, wire *wireCounter, rows int) (scalePass, error) {
	_, err := ddb.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &table, Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "OUTBOX#PASS"}, "sk": &types.AttributeValueMemberS{Value: "retention"}}})
	if err != nil {
		return scalePass{}, err
	}
	total := scalePass{Rows: rows, Event: "retention", Requests: map[string]int{}}
	for run := 1; ; run++ {
		p, err := invokeOnce(ctx, fn, sweeper, `{"check":"retention"}`, wire, rows)
		if err != nil {
			return total, err
		}
		total.Read += p.Read
		total.Took += p.Took
		for op, n := range p.Requests {
			total.Requests[op] += n
		}
		if scaleVerbose {
			fmt.Fprintf(os.Stderr, "retention run %d: %s\n", run, p.Result)
		}
		var res struct {
			Retention struct{ Pending bool }
		}
		if err := json.Unmarshal([]byte(p.Result), &res); err != nil {
			return total, fmt.Errorf("the sweeper's answer %s: %w", p.Result, err)
		}
		if !res.Retention.Pending || run == 20 {
			total.Result = fmt.Sprintf("%d run(s)", run)
			return total, nil
		}
	}
}

// seed writes n clones of the sample job's items, each set under a new
// changelist number and job id, as finished history: delivery rows settled
// (verified, out of the doubt index), jobs off the sweep index.
func seed(ctx context.Context, ddb *dynamodb.Client, table string, tmpl []map[string]types.AttributeValue, from, n int) error {
	oldJob, oldCL := sampleIDs(tmpl)
	var items []map[string]types.AttributeValue
	for c := from / len(tmpl); len(items) < n; c++ {
		newJob, newCL := uuid.NewString(), strconv.Itoa(2_000_000+c)
		for _, it := range tmpl[:min(len(tmpl), n-len(items))] {
			items = append(items, cloneItem(it, oldJob, newJob, oldCL, newCL))
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for w := range errs {
		wg.Go(func() { errs[w] = writeBatches(ctx, ddb, table, items[w*len(items)/4:(w+1)*len(items)/4]) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// countItems counts the table's items (the bench's own client, not counted).
func countItems(ctx context.Context, ddb *dynamodb.Client, table string) (int, error) {
	n := 0
	for p := dynamodb.NewScanPaginator(ddb, &dynamodb.ScanInput{TableName: &table, Select: types.SelectCount}); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return n, err
		}
		n += int(page.Count)
	}
	return n, nil
}

// sampleIDs finds the sample job's id and changelist in its items.
func sampleIDs(tmpl []map[string]types.AttributeValue) (jobID, cl string) {
	for _, it := range tmpl {
		if s, _ := it["pk"].(*types.AttributeValueMemberS); s != nil && strings.HasPrefix(s.Value, "JOB#") {
			jobID = strings.TrimPrefix(s.Value, "JOB#")
		}
		if n, _ := it["changelist_id"].(*types.AttributeValueMemberN); n != nil {
			cl = n.Value
		}
	}
	return jobID, cl
}

func cloneItem(it map[string]types.AttributeValue, oldJob, newJob, oldCL, newCL string) map[string]types.AttributeValue {
	out := maps.Clone(it)
	swap := func(s string) string {
		if oldJob != "" {
			s = strings.ReplaceAll(s, oldJob, newJob)
		}
		return strings.ReplaceAll(s, oldCL, newCL)
	}
	for _, k := range []string{"pk", "sk", "job_id", "idempotency_key"} {
		if s, ok := it[k].(*types.AttributeValueMemberS); ok {
			out[k] = &types.AttributeValueMemberS{Value: swap(s.Value)}
		}
	}
	if _, ok := it["changelist_id"].(*types.AttributeValueMemberN); ok {
		out["changelist_id"] = &types.AttributeValueMemberN{Value: newCL}
	}
	// Finished history: nothing due, nothing in doubt.
	for _, k := range []string{"sweep_shard", "sweep_at", "doubt", "doubt_at"} {
		delete(out, k)
	}
	if s, ok := it["status"].(*types.AttributeValueMemberS); ok && s.Value == "sent" {
		if _, ok := it["verified_at"]; !ok {
			out["verified_at"] = it["notified_at"]
		}
	}
	return out
}

// writeBatches writes items 25 to a request, retrying what DynamoDB leaves
// unprocessed.
func writeBatches(ctx context.Context, ddb *dynamodb.Client, table string, items []map[string]types.AttributeValue) error {
	for chunk := range slices.Chunk(items, 25) {
		var batch []types.WriteRequest
		for _, it := range chunk {
			batch = append(batch, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
		}
		for len(batch) > 0 {
			out, err := ddb.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: batch}})
			if err != nil {
				return err
			}
			batch = out.UnprocessedItems[table]
		}
	}
	return nil
}

const scaleHeader = "\n| history rows | run | DynamoDB items read | DynamoDB requests | time |\n|---:|---|---:|---|---:|"

// renderScale prints a measured invocation as a row of the table, as it comes.
func renderScale(w io.Writer, p scalePass) {
	run := "sweep + reconcile"
	if p.Event != "{}" {
		run = "retention check, one round (" + p.Result + ")"
	}
	var ops []string
	total := 0
	for op, n := range p.Requests {
		ops = append(ops, fmt.Sprintf("%s %d", op, n))
		total += n
	}
	sort.Strings(ops)
	fmt.Fprintf(w, "| %d | %s | %d | %d (%s) | %s |\n", p.Rows, run, p.Read, total, strings.Join(ops, ", "), p.Took.Round(10*time.Millisecond))
}
