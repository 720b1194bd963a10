package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		target, method, path string
		want                 Op
	}{
		{"DynamoDB_20120810.UpdateItem", "POST", "/", "dynamodb.UpdateItem"},
		{"AmazonSQS.SendMessage", "POST", "/", "sqs.SendMessage"},
		{"secretsmanager.GetSecretValue", "POST", "/", "secretsmanager.GetSecretValue"},
		{"", "PUT", "/bucket/key", "s3.PUT"},
		{"", "GET", "/bucket/key", "s3.GET"},
	} {
		r := httptest.NewRequest(tc.method, tc.path, nil)
		if tc.target != "" {
			r.Header.Set("X-Amz-Target", tc.target)
		}
		if got := Classify(r); got != tc.want {
			t.Errorf("Classify(%q %s %s) = %q, want %q", tc.target, tc.method, tc.path, got, tc.want)
		}
	}
}

// upstream is a fake AWS endpoint counting the requests that reached it.
func upstream(t *testing.T, hits *atomic.Int32) string {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = io.WriteString(w, `{}`)
	}))
	t.Cleanup(s.Close)
	return s.URL
}

type fixed struct{ f Fault }

func (d fixed) Decide(int, Op, int, []byte) (Fault, bool) { return d.f, true }

func start(t *testing.T, d Decider, up string) *Proxy {
	p := New()
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	if err := p.SetUpstream(up); err != nil {
		t.Fatal(err)
	}
	p.SetDecider(d)
	p.Register(7, "JOB#abc")
	return p
}

func awsConfig(endpoint string) aws.Config {
	return aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
}

func updateJob(ctx context.Context, c *dynamodb.Client) error {
	_, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("t"),
		Key:              map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "JOB#abc"}, "sk": &ddbtypes.AttributeValueMemberS{Value: "JOB"}},
		UpdateExpression: aws.String("SET a = :a"), ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":a": &ddbtypes.AttributeValueMemberS{Value: "x"}}})
	return err
}

// Each fault as the AWS SDK sees it, and whether the write reached the service.
func TestFaultsAsTheSDKSeesThem(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		kind    Kind
		applied bool
		check   func(error) bool
	}{
		{Delay, true, func(err error) bool { return err == nil }},
		{ResetBefore, false, func(err error) bool {
			return err != nil && strings.Contains(err.Error(), "reset") || errors.Is(err, io.EOF)
		}},
		{LostAnswer, true, func(err error) bool {
			return err != nil && strings.Contains(err.Error(), "reset") || errors.Is(err, io.EOF)
		}},
		{LostAnswer5xx, true, func(err error) bool {
			var ae smithy.APIError
			return errors.As(err, &ae) && ae.ErrorCode() == "InternalServerError"
		}},
		{Throttle, false, func(err error) bool {
			var pte *ddbtypes.ProvisionedThroughputExceededException
			return errors.As(err, &pte)
		}},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			var hits atomic.Int32
			p := start(t, fixed{Fault{Kind: tc.kind, Delay: 10 * time.Millisecond}}, upstream(t, &hits))
			err := updateJob(ctx, dynamodb.NewFromConfig(awsConfig(p.URL())))
			if !tc.check(err) {
				t.Fatalf("SDK error %v: not what the %s fault should look like", err, tc.kind)
			}
			if got := hits.Load() == 1; got != tc.applied {
				t.Fatalf("request reached the service: %v, want %v", got, tc.applied)
			}
			if ev := p.Events(); len(ev) != 1 || ev[0].Kind != tc.kind || ev[0].Job != 7 || ev[0].Op != "dynamodb.UpdateItem" || ev[0].N != 1 {
				t.Fatalf("events %+v", ev)
			}
		})
	}
}

// SQS's JSON protocol throttling error is recognised by the SDK's retryer.
func TestSQSThrottleIsRetriedBySDK(t *testing.T) {
	var hits atomic.Int32
	plan := &Plan{Seed: 1, Jobs: map[int][]Rule{7: {{Op: "sqs.SendMessage", Nth: 1, Kinds: []Kind{Throttle}}}}}
	p := start(t, plan, upstream(t, &hits))
	cfg := awsConfig(p.URL())
	cfg.RetryMaxAttempts = 3
	_, err := sqs.NewFromConfig(cfg).SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String("http://q/1/q"), MessageBody: aws.String(`{"job":"JOB#abc"}`)})
	if err != nil && !strings.Contains(err.Error(), "deserialization") {
		t.Fatalf("throttled SendMessage was not retried to success: %v", err)
	}
	if hits.Load() != 1 || len(p.Events()) != 1 || p.Events()[0].Kind != Throttle {
		t.Fatalf("hits %d events %+v: want one throttle then one forwarded request", hits.Load(), p.Events())
	}
}

// Unregistered requests are never faulted.
func TestUnregisteredRequestsPassThrough(t *testing.T) {
	var hits atomic.Int32
	p := start(t, fixed{Fault{Kind: ResetBefore}}, upstream(t, &hits))
	_, err := dynamodb.NewFromConfig(awsConfig(p.URL())).GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String("t"),
		Key: map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "JOB#other"}}})
	if err != nil || hits.Load() != 1 || len(p.Events()) != 0 {
		t.Fatalf("err %v hits %d events %v", err, hits.Load(), p.Events())
	}
}

func TestPlanIsReproducible(t *testing.T) {
	rules := []Rule{{Op: "dynamodb.", Rate: 0.3, Kinds: []Kind{Delay, LostAnswer, Throttle}, MaxDelay: time.Second}, {Op: "sqs.", Rate: 0.2, Kinds: []Kind{ResetBefore}}}
	run := func(seed int64) []string {
		p := &Plan{Seed: seed, Rules: rules, MaxPerJob: 4}
		var out []string
		for job := 0; job < 20; job++ {
			for n := 1; n <= 10; n++ {
				for _, op := range []Op{"dynamodb.UpdateItem", "sqs.SendMessage", "s3.PUT"} {
					if f, ok := p.Decide(job, op, n, nil); ok {
						out = append(out, string(op)+string(f.Kind)+f.Delay.String())
						if f.Kind == Delay && (f.Delay < 250*time.Millisecond || f.Delay > time.Second) {
							t.Fatalf("delay %s outside [250ms, 1s]", f.Delay)
						}
					}
				}
			}
		}
		return out
	}
	a, b, c := run(42), run(42), run(43)
	if strings.Join(a, ",") != strings.Join(b, ",") {
		t.Fatal("the same seed gave different plans")
	}
	if strings.Join(a, ",") == strings.Join(c, ",") {
		t.Fatal("different seeds gave the same plan")
	}
	if len(a) == 0 || len(a) > 20*4 {
		t.Fatalf("%d faults for 20 jobs capped at 4 each", len(a))
	}
	for _, s := range a {
		if strings.HasPrefix(s, "s3.") {
			t.Fatal("a rule fired for an op it does not name")
		}
	}
}

func TestPlanNthAndContains(t *testing.T) {
	p := &Plan{Seed: 1, Jobs: map[int][]Rule{3: {{Op: "dynamodb.UpdateItem", Contains: "stage_completed", Nth: 2, Kinds: []Kind{LostAnswer}}}}}
	for _, tc := range []struct {
		job  int
		n    int
		body string
		want bool
	}{
		{3, 1, `"stage_claimed"`, false},
		{3, 2, `"stage_completed"`, false}, // the first matching request
		{3, 3, `"stage_claimed"`, false},
		{3, 4, `"stage_completed"`, true}, // the second
		{3, 5, `"stage_completed"`, false},
		{4, 2, `"stage_completed"`, false},
	} {
		if _, ok := p.Decide(tc.job, "dynamodb.UpdateItem", tc.n, []byte(tc.body)); ok != tc.want {
			t.Errorf("job %d n %d body %s: fired %v, want %v", tc.job, tc.n, tc.body, ok, tc.want)
		}
	}
}

// The kill fault finds the process at the other end of the connection and
// refuses to kill anything that is not a function's bootstrap.
func TestPeerPIDAndKillRefusal(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	cmd := exec.Command("bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/"+itoa(port)+"; read -t 30 <&3")
	if err := cmd.Start(); err != nil {
		t.Skip("bash /dev/tcp unavailable:", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	pid, err := PeerPID(conn.RemoteAddr().String())
	if err != nil || pid != cmd.Process.Pid {
		t.Fatalf("PeerPID = %d, %v; want %d", pid, err, cmd.Process.Pid)
	}
	if _, err := KillBootstrapPeer(conn.RemoteAddr().String()); err == nil || !strings.Contains(err.Error(), "not a function bootstrap") {
		t.Fatalf("KillBootstrapPeer on bash: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// A process named bootstrap (as the emulator runs a function) connected to
// a port is found by that connection and killed.
func TestKillBootstrapsConnectedTo(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	b, err := os.ReadFile(bash)
	if err != nil {
		t.Fatal(err)
	}
	bootstrap := filepath.Join(t.TempDir(), "bootstrap")
	if err := os.WriteFile(bootstrap, b, 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	if _, err := KillBootstrapsConnectedTo(port); err == nil {
		t.Fatal("killed something before anything connected")
	}
	cmd := exec.Command(bootstrap, "-c", "exec 3<>/dev/tcp/127.0.0.1/"+itoa(port)+"; read -t 30 <&3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	pids, err := KillBootstrapsConnectedTo(port)
	if err != nil || len(pids) != 1 || pids[0] != cmd.Process.Pid {
		t.Fatalf("killed %v, %v; want [%d]", pids, err, cmd.Process.Pid)
	}
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the bootstrap ended with %v, want SIGKILL", err)
	}
}

// Answered sees each forwarded request's answer before the caller does, and
// the caller still gets it whole.
func TestAnsweredSeesTheAnswerFirst(t *testing.T) {
	var hits atomic.Int32
	p := New()
	var seen []string
	p.Answered = func(r *http.Request, status int, body []byte) {
		seen = append(seen, fmt.Sprintf("%s %d %s", Classify(r), status, body))
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	if err := p.SetUpstream(upstream(t, &hits)); err != nil {
		t.Fatal(err)
	}
	if err := updateJob(context.Background(), dynamodb.NewFromConfig(awsConfig(p.URL()))); err != nil {
		t.Fatal(err)
	}
	if want := []string{"dynamodb.UpdateItem 200 {}"}; !slices.Equal(seen, want) || hits.Load() != 1 {
		t.Errorf("Answered saw %q (%d upstream hits), want %q", seen, hits.Load(), want)
	}
}
