// Command criticizer is the operator's tool: a pre-flight of a deployment
// (doctor), triage and replay of dead letters, restarting a failed job,
// inspecting a job's state, history and deliveries, settling delivery rows,
// rotating caller credentials, reviewers' outcomes and promoting a canary.
// `criticizer help` lists every command (usage, in help.go) without
// touching AWS. It finds queues, tables and functions from the deployed
// stack's outputs; AWS credentials, region and AWS_ENDPOINT_URL come from
// the usual SDK sources, so the same commands work against AWS and the
// local emulator. Every command that changes state records the actor
// (CRITICIZER_ACTOR or the login name) and the note, ticket or evidence in
// the job's history.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/criticizer/criticizer/shared/dlq"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/store"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "criticizer:", err)
		os.Exit(1)
	}
}

type app struct {
	out   io.Writer
	json  bool
	dlq   *dlq.Client
	jobs  *store.Store
	rows  *outbox.Outbox
	sm    *secretsmanager.Client
	stack map[string]string
}

func run(ctx context.Context, args []string, out io.Writer) error {
	global := flag.NewFlagSet("criticizer", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	stack := global.String("stack", cmp.Or(os.Getenv("CRITICIZER_STACK"), "Criticizer-"+cmp.Or(os.Getenv("CRITICIZER_ENV"), "local")), "CloudFormation stack to operate on")
	asJSON := global.Bool("json", false, "print JSON instead of tables")
	err := global.Parse(args)
	if rest := global.Args(); errors.Is(err, flag.ErrHelp) || err == nil && (len(rest) == 0 || isHelp(rest[0])) {
		_, err := io.WriteString(out, usage)
		return err
	} else if err != nil {
		return fmt.Errorf("%w (criticizer help lists the commands)", err)
	}
	rest := global.Args()
	if rest[0] == "doctor" { // an invocation of the stack's doctor function, with its own AWS settings for --local
		given := os.Getenv("CRITICIZER_STACK") != ""
		global.Visit(func(f *flag.Flag) { given = given || f.Name == "stack" })
		return doctorCmd(ctx, out, *stack, given, *asJSON, rest[1:])
	}
	// The SDK's default chain: profiles, SSO, environment, instance roles.
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return fmt.Errorf("load AWS config: %w", err)
	}
	if rest[0] == "promote" { // judged by the environment's metrics and cdk.json, not the stack's resources
		return promote(ctx, cloudwatch.NewFromConfig(cfg), out, time.Now(), rest[1:])
	}
	outputs, err := stackOutputs(ctx, cloudformation.NewFromConfig(cfg), *stack)
	if err != nil {
		return err
	}
	queues := map[domain.Stage]dlq.Queues{}
	for s, name := range map[domain.Stage]string{domain.StageFetch: "Fetch", domain.StageLLM: "Llm", domain.StageNotify: "Notify"} {
		queues[s] = dlq.Queues{Source: outputs[name+"QueueUrl"], DLQ: outputs[name+"DlqUrl"]}
	}
	a := &app{out: out, json: *asJSON, stack: outputs,
		dlq:  &dlq.Client{API: sqs.NewFromConfig(cfg), Queues: queues, Hold: 30 * time.Second},
		jobs: store.New(dynamodb.NewFromConfig(cfg), outputs["JobsTableName"]),
		rows: outbox.New(dynamodb.NewFromConfig(cfg), outputs["JobsTableName"]).WithActor("operator " + operatorName()),
		sm:   secretsmanager.NewFromConfig(cfg)}
	dlqCommands := map[string]func(context.Context, []string) error{"list": a.dlqList, "show": a.dlqShow, "replay": a.dlqReplay}
	commands := map[string]func(context.Context, []string) error{
		"restart": a.restart, "resolve": a.resolve, "job": a.job, "outbox": a.outboxCmd, "secret": a.secretCmd,
		"outcomes": func(ctx context.Context, args []string) error {
			return a.outcomesCmd(ctx, dynamodb.NewFromConfig(cfg), outputs["JobsTableName"], args)
		}}
	if rest[0] == "dlq" {
		if len(rest) < 2 {
			return errors.New("usage: criticizer dlq list|show|replay")
		} else if cmd, ok := dlqCommands[rest[1]]; ok {
			return cmd(ctx, rest[2:])
		}
		return fmt.Errorf("unknown dlq command %q", rest[1])
	}
	if cmd, ok := commands[rest[0]]; ok {
		return cmd(ctx, rest[1:])
	}
	return fmt.Errorf("unknown command %q", rest[0])
}

func stackOutputs(ctx context.Context, cf *cloudformation.Client, name string) (map[string]string, error) {
	out, err := cf.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: &name})
	if err != nil {
		return nil, fmt.Errorf("read stack %s: %w", name, err)
	}
	if len(out.Stacks) == 0 {
		return nil, fmt.Errorf("stack %s not found", name)
	}
	m := map[string]string{}
	for _, o := range out.Stacks[0].Outputs {
		m[aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
	}
	return m, nil
}

// dlqItems lists up to max items of the DLQ of stage ("all": every stage),
// released at once for the next reader. A failed release is returned beside
// the items: they are real, but the next list may not show them until the
// hold ends, and the operator should know why.
func (a *app) dlqItems(ctx context.Context, stage string, max int) (all []dlq.Item, released error) {
	ss := domain.Stages
	if stage != "all" && stage != "" {
		s, err := domain.ParseStage(stage)
		if err != nil {
			return nil, err
		}
		ss = []domain.Stage{s}
	}
	for _, s := range ss {
		items, err := a.dlq.List(ctx, s, max)
		if err != nil {
			return nil, errors.Join(err, released)
		}
		released = errors.Join(released, a.dlq.Release(ctx, items))
		all = append(all, items...)
	}
	return all, released
}

func (a *app) dlqList(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("dlq list", flag.ContinueOnError)
	stage := fs.String("stage", "all", "fetch, llm, notify or all")
	max := fs.Int("max", 100, "most items per stage")
	if err := fs.Parse(args); err != nil {
		return err
	}
	all, err := a.dlqItems(ctx, *stage, *max)
	if err != nil && all == nil {
		return err
	}
	// What was listed is printed even when its release failed; the error follows.
	if a.json {
		return errors.Join(json.NewEncoder(a.out).Encode(all), err)
	}
	tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tMESSAGE\tJOB\tERROR_CLASS\tATTEMPTS\tFIRST_FAILURE\tLAST_FAILURE\tESCALATED\tREASON")
	for _, it := range all {
		attempts, first, last, esc, reason := "-", it.Attributes["first_failure_at"], it.Attributes["last_failure_at"], "", it.Attributes["reason"]
		if it.Envelope != nil && it.Envelope.DeadLetter != nil {
			dl := it.Envelope.DeadLetter
			attempts, first, last, reason = fmt.Sprint(dl.Attempts), dl.FirstFailureAt, dl.LastFailureAt, dl.Reason
			if dl.Escalated {
				esc = "yes"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", it.Stage, it.MessageID, it.JobID(), it.ErrorClass(), attempts, first, last, esc, truncate(reason, 80))
	}
	return errors.Join(tw.Flush(), err)
}

func (a *app) dlqShow(ctx context.Context, args []string) (rerr error) {
	fs := flag.NewFlagSet("dlq show", flag.ContinueOnError)
	stage := fs.String("stage", "all", "fetch, llm, notify or all")
	if err := fs.Parse(reorder(args)); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: criticizer dlq show MESSAGE_ID [--stage S]")
	}
	items, err := a.dlqItems(ctx, *stage, dlq.Searched)
	if err != nil && items == nil {
		return err
	}
	defer func() { rerr = errors.Join(rerr, err) }() // a failed release is reported after the item
	for _, it := range items {
		if it.MessageID != fs.Arg(0) {
			continue
		}
		if a.json {
			return json.NewEncoder(a.out).Encode(it)
		}
		fmt.Fprintf(a.out, "message %s on the %s DLQ (job %s, %s)\n", it.MessageID, it.Stage, it.JobID(), it.ErrorClass())
		for k, v := range it.Attributes {
			fmt.Fprintf(a.out, "  attribute %s = %s\n", k, v)
		}
		if it.Envelope == nil {
			fmt.Fprintf(a.out, "body (not an envelope; replaying it would fail again):\n%s\n", it.Body)
			return nil
		}
		b, _ := json.MarshalIndent(it.Envelope, "", "  ")
		fmt.Fprintf(a.out, "%s\n", b)
		return nil
	}
	return fmt.Errorf("message %s is not on the DLQ of %s", fs.Arg(0), *stage)
}

// reorder moves flags before positional arguments, so both
// "show ID --stage llm" and "show --stage llm ID" work.
func reorder(args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		if strings.HasPrefix(args[i], "-") {
			flags = append(flags, args[i])
			if !strings.Contains(args[i], "=") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		pos = append(pos, args[i])
	}
	return append(flags, pos...)
}

func truncate(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		return s[:n-1] + "…"
	}
	return s
}

func (a *app) dlqReplay(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("dlq replay", flag.ContinueOnError)
	stage := fs.String("stage", "", "fetch, llm or notify (required)")
	id := fs.String("id", "", "replay one message id")
	j := fs.String("job", "", "replay the items of one job")
	class := fs.String("error-class", "", "replay items of this error class")
	all := fs.Bool("all", false, "replay every item of the stage")
	max := fs.Int("max", 100, "most items to move")
	note := fs.String("note", "", "why: evidence or ticket reference (required; kept in each job's history)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *note == "" {
		return errors.New("dlq replay needs --note (the evidence or ticket that justifies the replay)")
	}
	s, err := domain.ParseStage(*stage)
	if err != nil {
		return err
	}
	f := dlq.Filter{MessageID: *id, JobID: *j, ErrorClass: failure.Class(*class)}
	if f == (dlq.Filter{}) && !*all {
		return errors.New("say what to replay: --id, --job, --error-class or --all")
	}
	moved, err := a.dlq.Replay(ctx, s, f, *max)
	for _, it := range moved {
		if rerr := a.record(ctx, it.JobID(), "dlq_replay", fmt.Sprintf("%s; %s message %s (%s)", *note, s, it.MessageID, it.ErrorClass())); rerr != nil {
			err = errors.Join(err, rerr)
		}
		if a.json {
			_ = json.NewEncoder(a.out).Encode(map[string]any{"replayed": it.MessageID, "job_id": it.JobID(), "stage": s, "error_class": it.ErrorClass()})
		} else {
			fmt.Fprintf(a.out, "replayed %s (job %s, %s) to the %s queue\n", it.MessageID, it.JobID(), it.ErrorClass(), s)
		}
	}
	if !a.json {
		fmt.Fprintf(a.out, "%d item(s) replayed\n", len(moved))
	}
	return err
}

func (a *app) restart(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("restart", flag.ContinueOnError)
	note := fs.String("note", "", "why (kept in the job history)")
	if err := fs.Parse(reorder(args)); err != nil {
		return err
	}
	if fs.NArg() != 1 || *note == "" {
		return errors.New("usage: criticizer restart JOB_ID --note TEXT")
	}
	j, err := a.jobs.Get(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	if j.State != job.Failed {
		return fmt.Errorf("job %s is %s: only failed jobs can be restarted (a succeeded version is never re-sent; send a higher review_version)", j.ID, j.State)
	}
	actor := operatorName()
	env := envelope.Envelope{V: envelope.Version, JobID: j.ID, Changelist: j.Changelist, ReviewVersion: j.ReviewVersion, TraceID: j.TraceID}
	if err := a.dlq.Restart(ctx, env, actor, *note); err != nil {
		return err
	}
	if err := a.record(ctx, j.ID, "restart", *note); err != nil {
		return err
	}
	fmt.Fprintf(a.out, "full restart of job %s requested\n", j.ID)
	return nil
}

func (a *app) job(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return errors.New("usage: criticizer job JOB_ID")
	}
	j, err := a.jobs.Get(ctx, args[0])
	if err != nil {
		return err
	}
	if a.json {
		return json.NewEncoder(a.out).Encode(j)
	}
	fmt.Fprintf(a.out, "job %s  changelist %d  version %d  state %s  stage %s\ncreated %s  updated %s  findings %d  recipients %s\n\n",
		j.ID, j.Changelist, j.ReviewVersion, j.State, j.Stage, j.CreatedAt, j.UpdatedAt, j.FindingCount, strings.Join(j.Recipients, ", "))
	tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tSTATUS\tATTEMPTS\tLAST_ERROR_CLASS\tREPLAYS")
	for _, s := range domain.Stages {
		r := j.StageRecord(s)
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\n", s, r.Status, r.Attempts, r.LastErrorClass, r.Replays)
	}
	fmt.Fprintln(tw, "\nAT\tEVENT\tSTAGE\tFROM→TO\tACTOR\tDETAIL")
	for _, e := range j.History {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s→%s\t%s\t%s\n", e.At, e.Type, e.Stage, e.From, e.To, e.Actor, truncate(e.Detail, 80))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// The deliveries beside the history: a comment Swarm refused for good
	// fails its row, not the job, and shows here.
	emails, comments, err := a.rows.JobRows(ctx, j)
	if err != nil {
		return fmt.Errorf("listing job %s's deliveries: %w", j.ID, err)
	}
	fmt.Fprintln(a.out, "\nDeliveries")
	return a.writeDeliveries(j, emails, comments)
}

// writeDeliveries lists job j's delivery rows: as one JSON list, e-mails
// first (a comment row carries channel, thread and item), or as the
// e-mail table and the Swarm comment table.
func (a *app) writeDeliveries(j *job.Job, emails, comments []outbox.Row) error {
	if a.json {
		return json.NewEncoder(a.out).Encode(append(emails, comments...))
	}
	if err := writeEmails(a.out, emails); err != nil {
		return err
	}
	return writeComments(a.out, j, comments)
}

// outboxCmd shows a job's delivery rows, or settles one an operator checked:
// the settling of rule OB-4 for a send that may have happened, and the
// intervention a permanent recipient failure requires.
func (a *app) outboxCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("outbox", flag.ContinueOnError)
	if len(args) > 0 && args[0] == "reconcile" {
		return a.reconcileCmd(ctx, args[1:])
	}
	evidence := fs.String("evidence", "", "what proves the delivery (for confirm), kept on the row and in the job history")
	note := fs.String("note", "", "why (for requeue): evidence or ticket reference, kept in the job history")
	if err := fs.Parse(reorder(args)); err != nil {
		return err
	}
	rest := fs.Args()
	action := "list"
	if len(rest) > 0 && (rest[0] == "requeue" || rest[0] == "confirm") {
		action, rest = rest[0], rest[1:]
	}
	if (action == "list" && len(rest) != 1) || (action != "list" && len(rest) != 2) {
		return errors.New("usage: criticizer outbox JOB_ID | outbox requeue JOB_ID RECIPIENT|ITEM --note TEXT | outbox confirm JOB_ID RECIPIENT|ITEM --evidence TEXT | outbox reconcile [flags]")
	}
	j, err := a.jobs.Get(ctx, rest[0])
	if err != nil {
		return err
	}
	if action != "list" {
		return a.settleRow(ctx, j, action, rest[1], *note, *evidence)
	}
	emails, comments, err := a.rows.JobRows(ctx, j)
	if err != nil {
		return err
	}
	return a.writeDeliveries(j, emails, comments)
}

// settleRow requeues (not delivered: send again) or confirms (delivered,
// checked by hand: never resend) job j's delivery row name, and records why.
func (a *app) settleRow(ctx context.Context, j *job.Job, action, name, note, evidence string) error {
	why, needs := note, "--note (what shows it was not delivered, or the ticket)"
	if action == "confirm" {
		why, needs = evidence, "--evidence (e.g. the provider's message id or a ticket)"
	}
	if why == "" {
		return fmt.Errorf("%s needs %s", action, needs)
	}
	k, err := rowRef(ctx, a.rows, j, name)
	if err != nil {
		return err
	}
	if action == "confirm" {
		err = a.rows.Confirm(ctx, k, evidence, job.Now())
	} else {
		err = a.rows.Requeue(ctx, k, job.Now())
	}
	if err == nil {
		err = a.record(ctx, j.ID, "outbox_"+action, name+"; "+why)
	}
	switch {
	case err != nil:
		return err
	case action == "confirm":
		fmt.Fprintf(a.out, "%s marked delivered; it will never be resent\n", name)
	case j.State == job.Succeeded:
		// A comment refused for good does not fail the job: its notify
		// stage delivers the requeued row on a redelivery (rule OB-5).
		if err := a.sendRedelivery(ctx, j, note); err != nil {
			return fmt.Errorf("%s is pending, but the redelivery to the succeeded job's notify stage could not be sent: %w", name, err)
		}
		fmt.Fprintf(a.out, "%s is pending again; a redelivery was sent to the succeeded job's notify stage\n", name)
	default:
		fmt.Fprintf(a.out, "%s is pending again; replay the job's notify dead letter to send it\n", name)
	}
	return nil
}
