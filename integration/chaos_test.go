//go:build integration

package integration

// The fault-injection suite (issue 8): jobs run through seeded fault plans —
// AWS-side faults from the proxy every function's AWS calls go through
// (lost answers to applied writes, resets, throttling, delays, the calling
// process SIGKILLed mid-request), p4 faults in each changelist's fixture,
// and LLM/SMTP/Swarm stand-in faults — and the outcome is judged against the
// spec's invariants: every job ends succeeded or failed with a dead letter,
// each (changelist, recipient, version) is e-mailed exactly once (none only
// when dead-lettered), nobody else is e-mailed, each finding and summary of
// a Swarm review is commented exactly once (chaos_comments_test.go), no
// secret is stored or logged, and replaying every dead letter twice changes
// nothing.
//
//	make chaos SEEDS=1,2,3 JOBS=40    any size (CHAOS_SEEDS, CHAOS_JOBS)
//	make test                          the fixed seeds below

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/criticizer/criticizer/internal/faultproxy"
	llmstandin "github.com/criticizer/criticizer/internal/standin/llm"
	smtpstandin "github.com/criticizer/criticizer/internal/standin/smtp"
	swarmstandin "github.com/criticizer/criticizer/internal/standin/swarm"
	"github.com/criticizer/criticizer/shared/dlq"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
)

// The fixed plan `make test` runs: 4 seeds × 26 jobs = 104 jobs.
var (
	defaultChaosSeeds = []int64{801, 802, 803, 804}
	defaultChaosJobs  = 26
)

// sweepEvery is the local stack's sweep schedule (cdk.json sweepSchedule);
// jobs whose next step was lost wait for it at worst.
const sweepEvery = time.Minute

// settleTime bounds how long a batch of jobs may take to settle under
// faults: each stage may lose a worker (its message returns after the
// lease), retries back off, and a job whose next message was lost is
// re-enqueued by a sweep (2 leases after its deadline, on the schedule).
func settleTime(jobs int) time.Duration {
	perStage := 2*env.lease + 2*sweepEvery
	return 3*perStage + time.Duration(jobs)*time.Second
}

func chaosSettings(t *testing.T) (seeds []int64, jobs int) {
	seeds, jobs = defaultChaosSeeds, defaultChaosJobs
	if s := os.Getenv("CHAOS_SEEDS"); s != "" {
		seeds = nil
		for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
			n, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				t.Fatalf("CHAOS_SEEDS: %q is not a number", f)
			}
			seeds = append(seeds, n)
		}
	}
	if s := os.Getenv("CHAOS_JOBS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("CHAOS_JOBS: %q is not a positive number", s)
		}
		jobs = n
	}
	return seeds, jobs
}

// chaosJob is one job of a seed's batch.
type chaosJob struct {
	n          int // ordinal in the batch: the proxy's job number
	cl         int64
	id         string
	requested  []string
	p4Fault    string // the fixture fault this job's changelist carries, if any
	forced     faultproxy.Rule
	final      *job.Job
	deadLetter bool
	// A Swarm-sourced review (0: a signed webhook's job): its findings are
	// posted as comments on review, and run is its test run.
	review int64
	run    swarmstandin.Run
	src    string // the review's chaos.c (its version 2 is made from it)
}

// The AWS faults every job may meet by chance (rates per request).
var chaosRules = []faultproxy.Rule{
	{Op: "dynamodb.UpdateItem", Rate: 0.12, Kinds: []faultproxy.Kind{faultproxy.LostAnswer, faultproxy.LostAnswer5xx, faultproxy.Throttle, faultproxy.Delay, faultproxy.ResetBefore}, MaxDelay: 1500 * time.Millisecond},
	{Op: "dynamodb.UpdateItem", Rate: 0.03, Kinds: []faultproxy.Kind{faultproxy.Kill}},
	{Op: "dynamodb.", Rate: 0.08, Kinds: []faultproxy.Kind{faultproxy.Throttle, faultproxy.Delay, faultproxy.LostAnswer, faultproxy.ResetBefore}},
	{Op: "sqs.", Rate: 0.12, Kinds: []faultproxy.Kind{faultproxy.LostAnswer, faultproxy.LostAnswer5xx, faultproxy.Throttle, faultproxy.Delay, faultproxy.ResetBefore}},
	{Op: "s3.", Rate: 0.08, Kinds: []faultproxy.Kind{faultproxy.Delay, faultproxy.ResetBefore, faultproxy.LostAnswer5xx}},
}

// The one fault each job is sure to meet, chosen by the seed.
var forcedRules = []faultproxy.Rule{
	{Op: "dynamodb.", Contains: "stage_completed", Nth: 1, Kinds: []faultproxy.Kind{faultproxy.LostAnswer}},
	{Op: "dynamodb.", Contains: "stage_completed", Nth: 2, Kinds: []faultproxy.Kind{faultproxy.LostAnswer5xx}},
	{Op: "dynamodb.", Contains: "stage_completed", Nth: 3, Kinds: []faultproxy.Kind{faultproxy.Kill}},
	{Op: "dynamodb.UpdateItem", Contains: "stage_claimed", Nth: 2, Kinds: []faultproxy.Kind{faultproxy.LostAnswer}},
	{Op: "dynamodb.UpdateItem", Contains: "stage_claimed", Nth: 3, Kinds: []faultproxy.Kind{faultproxy.Kill}},
	{Op: "sqs.SendMessage", Nth: 1, Kinds: []faultproxy.Kind{faultproxy.LostAnswer}},
	{Op: "sqs.SendMessage", Nth: 2, Kinds: []faultproxy.Kind{faultproxy.Throttle}},
	{Op: "dynamodb.", Nth: 2, Kinds: []faultproxy.Kind{faultproxy.Throttle}},
	{Op: "s3.PUT", Nth: 1, Kinds: []faultproxy.Kind{faultproxy.LostAnswer5xx}},
}

// Transient p4 faults a changelist fixture may carry (served once).
var p4Faults = []map[string]any{
	{"command": "describe", "stderr": "TCP connect to perforce:1666 failed.\nconnect: 127.0.0.1:1666: Connection refused", "exit": 1, "times": 1},
	{"command": "describe", "sleep_ms": 1500, "times": 1},
	{"command": "print", "sleep_ms": 1000, "times": 1},
}

// chaosReport accumulates what a run saw.
type chaosReport struct {
	jobs, succeeded, failed                    int
	proxyFaults                                map[faultproxy.Kind]int
	p4Faults, llmFaults                        int
	smtpFaults                                 map[smtpstandin.Stage]int
	emails, duplicates, lost, leaks, strangers int
	jobsWithoutFault                           int
	forcedOffPath                              int // jobs that failed before their forced fault's point
	smtpKills                                  int
	killsMissed                                int
	replayed                                   int
	// Swarm comments (chaos_comments_test.go).
	swarmJobs, comments, commentDuplicates, commentsMissing int
	reruns                                                  int // version 2 runs of succeeded reviews, under Swarm faults
	swarmFaults                                             map[string]int
	swarmKills                                              int
	lostCreates, lostCreatesPaged                           int // creates stored with their answer lost; of them, settled by a lookup past page 1
	problems                                                []string
}

func (r *chaosReport) problem(format string, args ...any) {
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

func (r *chaosReport) String() string {
	smtp := []string{}
	for _, s := range []smtpstandin.Stage{smtpstandin.StageMail, smtpstandin.StageRcpt, smtpstandin.StageData} {
		smtp = append(smtp, fmt.Sprintf("%s=%d", s, r.smtpFaults[s]))
	}
	var sw []string
	for _, k := range slices.Sorted(maps.Keys(r.swarmFaults)) {
		sw = append(sw, fmt.Sprintf("%s=%d", strings.TrimPrefix(k, "comments."), r.swarmFaults[k]))
	}
	return fmt.Sprintf("chaos: jobs=%d (swarm reviews=%d) succeeded=%d failed(dead-lettered)=%d emails=%d comments=%d | faults: aws[%s] (kills that found no bootstrap: %d) p4=%d llm=%d smtp[%s] smtp-worker-killed=%d swarm[%s] swarm-worker-killed=%d lost-creates-settled-past-page-1=%d/%d | jobs-without-fault=%d forced-fault-off-path=%d dead-letters-replayed-twice=%d | duplicates=%d lost=%d leaks=%d strangers-emailed=%d duplicate-comments=%d missing-comments=%d reruns=%d",
		r.jobs, r.swarmJobs, r.succeeded, r.failed, r.emails, r.comments, faultproxy.Format(r.proxyFaults), r.killsMissed, r.p4Faults, r.llmFaults, strings.Join(smtp, " "), r.smtpKills,
		strings.Join(sw, " "), r.swarmKills, r.lostCreatesPaged, r.lostCreates,
		r.jobsWithoutFault, r.forcedOffPath, r.replayed, r.duplicates, r.lost, r.leaks, r.strangers, r.commentDuplicates, r.commentsMissing, r.reruns)
}

// TestChaos runs every seed's batch of jobs under its fault plan and judges
// the outcome. The counts are printed (and written to $CHAOS_REPORT).
func TestChaos(t *testing.T) {
	seeds, jobs := chaosSettings(t)
	total := &chaosReport{proxyFaults: map[faultproxy.Kind]int{}, smtpFaults: map[smtpstandin.Stage]int{}, swarmFaults: map[string]int{}}
	t.Cleanup(func() {
		env.proxy.SetDecider(nil)
		env.llm.Reset()
		env.smtp.Reset()
		env.local.Swarm.OnFault(nil)
		env.local.Swarm.ClearFaults()
	})
	for _, seed := range seeds {
		r := runChaosSeed(t, seed, jobs)
		t.Logf("seed %d: %s", seed, r)
		total.jobs += r.jobs
		total.succeeded += r.succeeded
		total.failed += r.failed
		total.emails += r.emails
		total.p4Faults += r.p4Faults
		total.llmFaults += r.llmFaults
		total.duplicates += r.duplicates
		total.lost += r.lost
		total.leaks += r.leaks
		total.strangers += r.strangers
		total.jobsWithoutFault += r.jobsWithoutFault
		total.forcedOffPath += r.forcedOffPath
		total.replayed += r.replayed
		total.smtpKills += r.smtpKills
		total.killsMissed += r.killsMissed
		total.swarmJobs += r.swarmJobs
		total.comments += r.comments
		total.commentDuplicates += r.commentDuplicates
		total.commentsMissing += r.commentsMissing
		total.swarmKills += r.swarmKills
		total.lostCreates += r.lostCreates
		total.lostCreatesPaged += r.lostCreatesPaged
		total.reruns += r.reruns
		for k, v := range r.swarmFaults {
			total.swarmFaults[k] += v
		}
		for k, v := range r.proxyFaults {
			total.proxyFaults[k] += v
		}
		for k, v := range r.smtpFaults {
			total.smtpFaults[k] += v
		}
		for _, p := range r.problems {
			t.Errorf("seed %d: %s", seed, p)
		}
	}
	line := fmt.Sprintf("%s (seeds %v)", total, seeds)
	t.Log(line)
	fmt.Println(line)
	if p := os.Getenv("CHAOS_REPORT"); p != "" {
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, []byte(line+"\n"), 0o644)
	}
	if total.jobsWithoutFault > 0 {
		t.Errorf("%d jobs met no injected fault: the plan does not cover every job", total.jobsWithoutFault)
	}
	if total.swarmJobs > 0 && total.lostCreatesPaged == 0 {
		t.Errorf("no create whose answer was lost was settled by a lookup past the first page of comments: the plan does not cover it")
	}
}

func runChaosSeed(t *testing.T, seed int64, n int) *chaosReport {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5eed))
	r := &chaosReport{jobs: n, proxyFaults: map[faultproxy.Kind]int{}, smtpFaults: map[smtpstandin.Stage]int{}}
	logStart := fileSize(env.local.Emulator.LogFile)
	eventsBefore := len(env.proxy.Events())
	smtpBefore := env.smtp.Served()
	swarmBefore := len(env.local.Swarm.Requests())

	// The plan: chance faults for every job, one sure fault per job.
	plan := &faultproxy.Plan{Seed: seed, Rules: chaosRules, Jobs: map[int][]faultproxy.Rule{}, MaxPerJob: 3}
	jobs := make([]*chaosJob, n)
	for i := range jobs {
		j := &chaosJob{n: i, forced: forcedRules[rng.IntN(len(forcedRules))], requested: []string{"reviewers@example.com"}}
		switch {
		case i == 0:
			// One job per seed is dead-lettered for good (a p4 credential
			// problem), so the replay judgement always has work.
			j.p4Fault = "describe (permanent)"
			j.cl = newChangeWith(t, 12345, func(fx map[string]any) {
				fx["faults"] = []any{map[string]any{"command": "describe", "stderr": "Perforce password (P4PASSWD) invalid or unset.", "exit": 1, "times": 0}}
			})
		case rng.IntN(3) == 0:
			f := p4Faults[rng.IntN(len(p4Faults))]
			j.p4Fault = fmt.Sprint(f["command"])
			mutate := func(fx map[string]any) { fx["faults"] = []any{f} }
			if swarmChaosJob(i) {
				newSwarmChaosChange(t, rng, j, mutate)
			} else {
				j.cl = newChangeWith(t, 12345, mutate)
			}
		case swarmChaosJob(i):
			newSwarmChaosChange(t, rng, j, nil)
		default:
			j.cl = newChange(t, 12345)
		}
		plan.Jobs[i] = []faultproxy.Rule{j.forced}
		jobs[i] = j
	}
	env.proxy.SetDecider(plan)

	// Stand-in faults, consumed by whichever job gets there first. One
	// credential rejection dead-letters a job at llm (a replay then resumes it).
	env.llm.Reset()
	env.llm.QueueFault(llmstandin.Fault{Status: 401, Count: 2, Body: json.RawMessage(`{"error":{"type":"invalid_request_error","code":"invalid_api_key","message":"Incorrect API key provided"}}`)})
	for i := 0; i < n/6+1; i++ {
		switch rng.IntN(3) {
		case 0:
			// The provider's error text echoes secrets: none may be stored or logged.
			body, _ := json.Marshal(map[string]any{"error": map[string]any{"type": "server_error", "code": "internal_error",
				"message": "upstream failed for key " + env.secrets["LLM API key"] + " while reading " + plantedSecrets[1]}})
			env.llm.QueueFault(llmstandin.Fault{Status: 500, Body: body})
		case 1:
			env.llm.QueueFault(llmstandin.Fault{Status: 429, RetryAfter: "1", Body: json.RawMessage(`{"error":{"type":"rate_limit_error","code":"rate_limit_exceeded","message":"slow down"}}`)})
		case 2:
			env.llm.QueueFault(llmstandin.Fault{DelayMS: 1500})
		}
	}
	for i := 0; i < n/6+1; i++ {
		var f smtpstandin.Fault
		k := rng.IntN(4)
		if i == 0 {
			k = 0 // every seed meets the stalled DATA reply at least once
		}
		switch k {
		case 0: // the stalled reply to the final dot: held past the notify function's timeout, then accepted
			f = smtpstandin.Fault{Stage: smtpstandin.StageData, Delay: 2 * env.lease}
		case 1:
			f = smtpstandin.Fault{Stage: smtpstandin.StageData, Drop: true}
		case 2:
			// A relay that quotes what it was given: the reply text is untrusted.
			f = smtpstandin.Fault{Stage: smtpstandin.StageRcpt, Code: 451, Enhanced: "4.3.0", Message: "try again later; relay auth " + plantedSecrets[2] + " for alice@example.com"}
		case 3:
			f = smtpstandin.Fault{Stage: smtpstandin.StageMail, Code: 421, Enhanced: "4.7.0", Message: "too many connections"}
		}
		if err := env.smtp.QueueFault(f); err != nil {
			t.Fatal(err)
		}
	}

	// Swarm comment posts meet the stand-in's faults; reviewers comment
	// while a lost create's answer is missing.
	swarmJobs := 0
	for _, j := range jobs {
		if j.review != 0 {
			swarmJobs++
		}
	}
	if swarmJobs > 0 {
		queueSwarmFaults(rng, swarmJobs)
	}
	lost := reviewersMeanwhile()
	swKiller := &swarmKiller{killed: map[string]bool{}}

	// The case behind issue 8's duplicate e-mails: while the SMTP server
	// holds a message after the final dot, its worker dies; so does the
	// notify worker whose comment the Swarm stand-in holds.
	stopKiller := make(chan struct{})
	killerDone := make(chan int)
	go func() {
		kills, lastHold := 0, -1
		tick := time.NewTicker(150 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopKiller:
				killerDone <- kills
				return
			case <-tick.C:
			}
			swKiller.tick()
			if env.smtp.Held() == 0 {
				continue
			}
			if n := env.smtp.Served()[smtpstandin.StageData]; n != lastHold {
				lastHold = n
				_, port, _ := net.SplitHostPort(env.smtp.Addr())
				p, _ := strconv.Atoi(port)
				if pids, err := faultproxy.KillBootstrapsConnectedTo(p); err == nil {
					kills += len(pids)
				}
			}
		}
	}()

	// Submit the batch; each job is registered with the proxy the moment
	// its id is known.
	for _, j := range jobs {
		var resp apiResponse
		if j.review != 0 {
			resp = swarmPost(t, j.cl, j.run, "shelved") // as Swarm sends it: the bearer token, the documented body
		} else {
			resp = postWebhook(t, map[string]any{"changelist_id": j.cl, "review_version": 1, "idempotency_key": fmt.Sprintf("chaos-%d-%d-%d", seed, j.n, j.cl), "recipients": j.requested})
		}
		if resp.Status != 202 {
			t.Fatalf("webhook for job %d: %d %s", j.n, resp.Status, resp.Body)
		}
		j.id = resp.Decoded["job_id"].(string)
		tokens := []string{j.id, fmt.Sprintf("OUTBOX#%d#", j.cl)}
		if j.review != 0 {
			tokens = append(tokens, fmt.Sprintf("OUTBOX#SWARM#%d\"", j.review)) // the review's comment rows
		}
		env.proxy.Register(j.n, tokens...)
	}

	// Wait for every job to settle and for the SMTP server to hold nothing
	// it may still accept.
	waitSettled(t, jobs, settleTime(n))
	env.proxy.SetDecider(nil)
	close(stopKiller)
	r.smtpKills = <-killerDone
	r.swarmKills = swKiller.kills
	waitHeld(t)

	r.judge(t, jobs, seed)

	// Fault attribution: proxy events per job, p4 faults served, LLM faults
	// served to each changelist's prompt, SMTP faults served.
	events := env.proxy.Events()[eventsBefore:]
	byKind, byJob := faultproxy.Counts(events)
	r.proxyFaults = byKind
	for _, e := range events {
		if e.Kind == faultproxy.Kill && !strings.HasPrefix(e.Note, "killed") {
			r.killsMissed++ // the request came from a process that is not a function's bootstrap
		}
	}
	llmByCL := map[int64]int{}
	for _, req := range env.llm.Requests() {
		if req.Fault == "" {
			continue
		}
		r.llmFaults++
		for _, j := range jobs {
			for _, m := range req.Messages {
				if strings.Contains(m.Content, changeMarker(j.cl)) {
					llmByCL[j.cl]++
				}
			}
		}
	}
	for st, v := range env.smtp.Served() {
		r.smtpFaults[st] = v - smtpBefore[st]
	}
	swarmReqs := env.local.Swarm.Requests()[swarmBefore:]
	swarmByKind, swarmByReview := swarmFaultsMet(swarmReqs)
	r.swarmFaults = swarmByKind
	for _, j := range jobs {
		p4 := p4Served(j.cl)
		r.p4Faults += p4
		met := byJob[j.n] + p4 + llmByCL[j.cl]
		if j.review != 0 {
			met += swarmByReview[j.review]
		}
		if met > 0 {
			continue
		}
		// Coverage counts the faults the job did meet on the path it took.
		// A job that was dead-lettered or retried met a failure before its
		// forced fault's point (an SMTP fault, say, which is not attributed
		// per job): covered, and its forced rule is simply not on its path.
		if metFailure(j) {
			r.forcedOffPath++
			t.Logf("seed %d: job %d (%s) ended %s before its forced rule %s/%s #%d: covered by the failure it met", seed, j.n, j.id, finalState(j), j.forced.Op, j.forced.Contains, j.forced.Nth)
			continue
		}
		// A job that took the whole path without a failure passed every
		// forced rule's point: meeting none means the proxy did not inject.
		r.jobsWithoutFault++
		r.problem("job %d (%s) took the whole path and met no injected fault (forced rule %s/%s #%d never matched): the fault proxy did not inject", j.n, j.id, j.forced.Op, j.forced.Contains, j.forced.Nth)
	}

	// Secrets: none in any job record, outbox row, dead letter or in what
	// the functions logged during the run.
	r.scanLeaks(t, jobs, logStart)

	// Replay every dead letter twice, faults off: nothing may change for
	// succeeded jobs, nobody may get a second e-mail, every job settles again.
	env.local.Swarm.ClearFaults()
	r.replayTwice(t, jobs)

	// Comments are judged once every job has settled for good (a job
	// dead-lettered at notify may post the rest of them on replay).
	env.local.Swarm.OnFault(nil)
	storedLost, paged := lost.settledPastFirstPage(env.local.Swarm.Requests()[swarmBefore:])
	r.judgeComments(t, jobs, storedLost, paged)

	// The reviews that succeeded get a version 2 (one finding fixed, one
	// new), run under Swarm faults and judged like the first.
	r.rerunSwarmReviews(t, rng, jobs)
	return r
}

// waitSettled polls until every job is terminal, or reports the stragglers
// as lost.
func waitSettled(t *testing.T, jobs []*chaosJob, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		pending := 0
		for _, j := range jobs {
			if j.final != nil && j.final.Terminal() {
				continue
			}
			if got, err := env.jobs.Get(context.Background(), j.id); err == nil {
				j.final = got
			}
			if j.final == nil || !j.final.Terminal() {
				pending++
			}
		}
		if pending == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Second)
	}
}

// waitHeld waits until the SMTP stand-in holds no stalled transaction and
// the Swarm stand-in no held request: a held message may still be accepted,
// a held comment still stored, so counting before would miss it.
func waitHeld(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(env.lease + 30*time.Second)
	for env.smtp.Held() > 0 || len(env.local.Swarm.Held()) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the SMTP stand-in still holds %d transactions, the Swarm stand-in %d requests", env.smtp.Held(), len(env.local.Swarm.Held()))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// deadLetters lists every dead letter on the stage DLQs by job id (the
// items are released again at once).
func deadLetters(t *testing.T) map[string][]dlq.Item {
	t.Helper()
	out := map[string][]dlq.Item{}
	op := operator()
	for _, s := range domain.Stages {
		items, err := op.List(context.Background(), s, dlq.Searched)
		if err != nil {
			t.Fatal(err)
		}
		if err := op.Release(context.Background(), items); err != nil {
			t.Fatal(err) // a held item would be missing from the next reader's list
		}
		for _, it := range items {
			out[it.JobID()] = append(out[it.JobID()], it)
		}
	}
	return out
}

// waitDeadLetter waits until a dead letter of job id is on the stage's DLQ
// (it is left there, visible again at once).
func waitDeadLetter(t *testing.T, stage domain.Stage, id string) {
	t.Helper()
	deadline := time.Now().Add(untilDeadLettered())
	op := operator()
	for {
		items, err := op.List(context.Background(), stage, dlq.Searched)
		if err != nil {
			t.Fatal(err)
		}
		if err := op.Release(context.Background(), items); err != nil {
			t.Fatal(err) // a held item would be missing from the next reader's list
		}
		for _, it := range items {
			if it.JobID() == id {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no dead letter of job %s on the %s DLQ after %s", id, stage, untilDeadLettered())
		}
	}
}

// mailsByRecipient groups the accepted messages of a changelist's version 1
// by envelope recipient.
func mailsByRecipient(cl int64) map[string][]smtpstandin.Message {
	out := map[string][]smtpstandin.Message{}
	for _, m := range mailsFor(cl, 1) {
		for _, to := range m.To {
			out[strings.ToLower(to)] = append(out[strings.ToLower(to)], m)
		}
	}
	return out
}

func (r *chaosReport) judge(t *testing.T, jobs []*chaosJob, seed int64) {
	t.Helper()
	dls := deadLetters(t)
	for _, j := range jobs {
		byRcpt := mailsByRecipient(j.cl)
		for _, ms := range byRcpt {
			r.emails += len(ms)
		}
		if j.final == nil || !j.final.Terminal() {
			r.lost++
			state := "missing"
			if j.final != nil {
				state = fmt.Sprintf("%s at %s", j.final.State, j.final.Stage)
			}
			r.problem("job %d (%s, CL %d) did not settle: %s; history %s", j.n, j.id, j.cl, state, historyOf(j.final))
			continue
		}
		j.deadLetter = len(dls[j.id]) > 0
		switch j.final.State {
		case job.Succeeded:
			r.succeeded++
		case job.Failed:
			r.failed++
			if !j.deadLetter {
				r.lost++
				r.problem("job %d (%s) failed without a dead letter", j.n, j.id)
			}
		}
		listed := map[string]bool{}
		for _, rc := range j.final.Recipients {
			listed[strings.ToLower(rc)] = true
		}
		for rc, ms := range byRcpt {
			if !listed[rc] {
				r.strangers += len(ms)
				r.problem("job %d (CL %d): e-mail to %s, who is not among its recipients %v", j.n, j.cl, rc, j.final.Recipients)
			}
			if len(ms) > 1 {
				r.duplicates += len(ms) - 1
				ids := []string{}
				for _, m := range ms {
					ids = append(ids, m.MessageID)
				}
				r.problem("job %d (%s, CL %d): %s e-mailed %d times (Message-IDs %v); history %s", j.n, j.id, j.cl, rc, len(ms), ids, historyOf(j.final))
			}
		}
		if j.final.State == job.Succeeded {
			for rc := range listed {
				if len(byRcpt[rc]) == 0 {
					r.lost++
					r.problem("job %d (%s) succeeded but %s got no e-mail", j.n, j.id, rc)
				}
			}
		}
	}
}

func historyOf(j *job.Job) string {
	if j == nil {
		return "[]"
	}
	var parts []string
	for _, e := range j.History {
		parts = append(parts, fmt.Sprintf("%s %s/%s %s", e.At[11:min(len(e.At), 23)], e.Type, e.Stage, e.Detail))
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

func (r *chaosReport) scanLeaks(t *testing.T, jobs []*chaosJob, logStart int64) {
	t.Helper()
	check := func(what, s string) {
		for name, v := range env.secrets {
			if v != "" && strings.Contains(s, v) {
				r.leaks++
				r.problem("%s contains the %s", what, name)
			}
		}
		for _, p := range plantedSecrets {
			if strings.Contains(s, p) {
				r.leaks++
				r.problem("%s contains the planted secret %s…", what, p[:6])
			}
		}
	}
	for _, j := range jobs {
		if j.final != nil {
			b, _ := json.Marshal(j.final)
			check("job record "+j.id, string(b))
		}
		rows, err := env.outbox.List(context.Background(), j.cl, 1)
		if err == nil {
			b, _ := json.Marshal(rows)
			check(fmt.Sprintf("outbox rows of CL %d", j.cl), string(b))
		}
	}
	for id, items := range deadLetters(t) {
		for _, it := range items {
			check("dead letter of job "+id, it.Body+fmt.Sprint(it.Attributes))
		}
	}
	if b, err := readFrom(env.local.Emulator.LogFile, logStart); err == nil {
		check("the functions' logs", string(b))
	}
}

func (r *chaosReport) replayTwice(t *testing.T, jobs []*chaosJob) {
	t.Helper()
	ctx := context.Background()
	type snapshot struct {
		state    job.State
		mails    int
		byRcpt   map[string]int
		comments int // a Swarm review's comments by the service
	}
	before := map[string]snapshot{}
	for _, j := range jobs {
		if j.final != nil {
			snap := snapshot{state: j.final.State, byRcpt: map[string]int{}}
			for rc, ms := range mailsByRecipient(j.cl) {
				snap.mails += len(ms)
				snap.byRcpt[rc] = len(ms)
			}
			if j.review != 0 {
				snap.comments = len(ourCommentsOn(j.review))
			}
			before[j.id] = snap
		}
	}
	ours := map[string]*chaosJob{}
	for _, j := range jobs {
		ours[j.id] = j
	}
	sources := stageURLs("QueueUrl")
	for id, items := range deadLetters(t) {
		if ours[id] == nil {
			continue
		}
		for _, it := range items {
			for range 2 {
				url, body := sources[it.Stage], it.Body
				if _, err := env.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: &body}); err != nil {
					t.Fatal(err)
				}
			}
			r.replayed++
		}
	}
	if r.replayed == 0 {
		return
	}
	// A replayed job runs again; wait until each is terminal once more and
	// until its replays have been consumed (the message count stops moving).
	// The replays are handled once the stage queues are idle; then every
	// job is read again (a job read earlier may not have seen its replay).
	awaitQueuesIdle(t, settleTime(len(jobs)))
	waitHeld(t)
	for _, j := range jobs {
		j.final = nil
	}
	waitSettled(t, jobs, settleTime(len(jobs)))
	for _, j := range jobs {
		b, ok := before[j.id]
		if !ok || j.final == nil {
			continue
		}
		n := 0
		byRcpt := mailsByRecipient(j.cl)
		for rc, ms := range byRcpt {
			n += len(ms)
			if was := b.byRcpt[rc]; len(ms) > max(1, was) { // duplicates already counted are not counted again
				r.duplicates += len(ms) - max(1, was)
				r.problem("after replaying dead letters twice, job %d (CL %d): %s e-mailed %d times (%d before)", j.n, j.cl, rc, len(ms), was)
			}
		}
		if b.state == job.Succeeded && (j.final.State != job.Succeeded || n != b.mails) {
			r.problem("replaying dead letters changed succeeded job %d: state %s, %d e-mails (was %d)", j.n, j.final.State, n, b.mails)
		}
		if c := len(ourCommentsOn(j.review)); j.review != 0 && b.state == job.Succeeded && c != b.comments {
			r.problem("replaying dead letters changed succeeded job %d's review %d: %d comments (was %d)", j.n, j.review, c, b.comments)
		}
		if !j.final.Terminal() {
			r.lost++
			r.problem("after replay, job %d (%s) did not settle: %s at %s", j.n, j.id, j.final.State, j.final.Stage)
		}
	}
}

// p4Served counts the fixture faults the p4 stand-in served for a changelist.
func p4Served(cl int64) int {
	matches, _ := filepath.Glob(filepath.Join(env.depot, ".state", fmt.Sprintf("change-%d.*.served", cl)))
	total := 0
	for _, m := range matches {
		b, _ := os.ReadFile(m)
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		total += n
	}
	return total
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func readFrom(path string, off int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(off, 0); err != nil {
		return nil, err
	}
	var b strings.Builder
	buf := make([]byte, 1<<20)
	for {
		n, err := f.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return []byte(b.String()), nil
}

// metFailure reports whether job j met a failure on its way, whatever its
// source: it was dead-lettered, or a stage of it scheduled a retry.
func metFailure(j *chaosJob) bool {
	if j.deadLetter || (j.final != nil && j.final.State == job.Failed) {
		return true
	}
	if j.final != nil {
		for _, e := range j.final.History {
			if e.Type == job.EventRetryScheduled || e.Type == job.EventDeadLettered {
				return true
			}
		}
	}
	return false
}

func finalState(j *chaosJob) job.State {
	if j.final == nil {
		return ""
	}
	return j.final.State
}
