package doctor

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	sestypes "github.com/aws/aws-sdk-go-v2/service/sesv2/types"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/llm"
	"github.com/criticizer/criticizer/shared/p4"
	"github.com/criticizer/criticizer/shared/swarm"
)

// fakeP4 answers each command with its records or error.
type fakeP4 map[string]struct {
	recs []p4.Record
	err  error
}

func (f fakeP4) Run(_ context.Context, command string, args ...string) ([]p4.Record, error) {
	a := f[strings.TrimSpace(command+" "+strings.Join(args, " "))]
	return a.recs, a.err
}

type fakeFetcher struct {
	lines  []string
	proof  error
	cs     domain.Changeset
	fetch  error
	called bool
}

func (f *fakeFetcher) ProveProtections(context.Context) ([]string, error) { return f.lines, f.proof }
func (f *fakeFetcher) Fetch(context.Context, int64, bool) (domain.Changeset, error) {
	f.called = true
	return f.cs, f.fetch
}

func verdicts(r Report) map[string]Verdict {
	m := map[string]Verdict{}
	for _, v := range r.Verdicts {
		m[v.Check] = v
	}
	return m
}

func TestP4Checks(t *testing.T) {
	info := struct {
		recs []p4.Record
		err  error
	}{recs: []p4.Record{{"serverVersion": "P4D/LINUX26X86_64/2024.2/2675662"}}}
	login := func(secs string) struct {
		recs []p4.Record
		err  error
	} {
		return struct {
			recs []p4.Record
			err  error
		}{recs: []p4.Record{{"User": "criticizer", "TicketExpiration": secs}}}
	}
	whole := domain.Changeset{Files: []domain.FileChange{{DepotPath: "//depot/a.c", Diff: "@@"}, {DepotPath: "//depot/b.png"}}}
	tests := []struct {
		name    string
		runner  fakeP4
		fetcher fakeFetcher
		ticket  bool
		change  int64
		want    map[string]Status
		wantIn  map[string]string // check → text its detail or fix holds
	}{
		{"all sound", fakeP4{"info": info, "login -s": login("43200")}, fakeFetcher{lines: []string{"read * //depot/..."}, cs: whole}, false, 12345,
			map[string]Status{CheckP4Connection: OK, CheckP4Login: OK, CheckP4Protections: OK, CheckP4Sample: OK},
			map[string]string{CheckP4Connection: "2024.2", CheckP4Protections: "read * //depot/...", CheckP4Sample: "2 files, 1 with a diff"}},
		{"unreachable: the rest skipped", fakeP4{"info": {err: failure.Errorf(failure.NetworkTimeout, "p4 info: connect to ssl:p4:1666 failed")}}, fakeFetcher{}, false, 12345,
			map[string]Status{CheckP4Connection: Fail, CheckP4Login: Skip, CheckP4Protections: Skip, CheckP4Sample: Skip},
			map[string]string{CheckP4Connection: "security groups"}},
		{"trust mismatch", fakeP4{"info": {err: failure.Errorf(failure.SecurityFailure, "p4 info: IDENTIFICATION HAS CHANGED")}}, fakeFetcher{}, false, 0,
			map[string]Status{CheckP4Connection: Fail},
			map[string]string{CheckP4Connection: "p4TrustFingerprint"}},
		{"login refused", fakeP4{"info": {err: failure.Errorf(failure.AuthDenied, "p4 info: password invalid")}, "login -s": {err: failure.Errorf(failure.AuthDenied, "p4 login: password invalid")}},
			fakeFetcher{lines: []string{"read * //depot/..."}}, false, 0,
			map[string]Status{CheckP4Connection: OK, CheckP4Login: Fail, CheckP4Sample: Skip},
			map[string]string{CheckP4Login: "P4_SECRET_ID"}},
		{"ticket about to expire", fakeP4{"info": info, "login -s": login("3600")}, fakeFetcher{lines: []string{"read * //..."}}, true, 0,
			map[string]Status{CheckP4Login: Warn}, map[string]string{CheckP4Login: "nothing renews it"}},
		{"password: a short ticket is renewed", fakeP4{"info": info, "login -s": login("3600")}, fakeFetcher{lines: []string{"read * //..."}}, false, 0,
			map[string]Status{CheckP4Login: OK}, nil},
		{"protections exclude a path: no fetch tried", fakeP4{"info": info, "login -s": login("43200")},
			fakeFetcher{proof: failure.Errorf(failure.SecurityFailure, `p4 protections refused (exclusion_under_allowlist): the exclusionary line "list * -//depot/projectA/tools/..." reaches into the allow-listed //depot/projectA/...`)}, false, 12345,
			map[string]Status{CheckP4Protections: Fail, CheckP4Sample: Skip},
			map[string]string{CheckP4Protections: "-//depot/projectA/tools/..."}},
		{"sample outside the allow-list", fakeP4{"info": info, "login -s": login("43200")}, fakeFetcher{lines: []string{"read * //..."}, fetch: failure.Errorf(failure.PolicyRejected, "file //other/x outside the allow-list")}, false, 12346,
			map[string]Status{CheckP4Sample: Warn}, map[string]string{CheckP4Sample: "depotAllowList"}},
		{"no sample given", fakeP4{"info": info, "login -s": login("43200")}, fakeFetcher{lines: []string{"read * //..."}}, false, 0,
			map[string]Status{CheckP4Sample: Skip}, map[string]string{CheckP4Sample: "--change"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.fetcher
			d := &Doctor{P4: &P4{Runner: tt.runner, Fetcher: &f, Port: "ssl:p4:1666", Ticket: tt.ticket}}
			got := verdicts(d.Run(context.Background(), Request{Change: tt.change}))
			for check, want := range tt.want {
				v := got[check]
				if v.Status != want {
					t.Errorf("%s: %s (%s), want %s", check, v.Status, v.Detail, want)
				}
				if v.Status == Fail && v.Fix == "" {
					t.Errorf("%s failed without a fix", check)
				}
			}
			for check, text := range tt.wantIn {
				if v := got[check]; !strings.Contains(v.Detail+" "+v.Fix, text) {
					t.Errorf("%s: %q / %q lacks %q", check, v.Detail, v.Fix, text)
				}
			}
			if tt.want[CheckP4Sample] == Skip && f.called {
				t.Error("fetched a sample although the check was skipped")
			}
		})
	}
}

type fakeSwarm struct {
	version string
	verr    error
	review  swarm.Review
	rerr    error
}

func (f fakeSwarm) Version(context.Context) (string, error) { return f.version, f.verr }
func (f fakeSwarm) GetReview(context.Context, int64) (swarm.Review, error) {
	return f.review, f.rerr
}

func TestSwarmChecks(t *testing.T) {
	tests := []struct {
		name   string
		api    fakeSwarm
		review int64
		want   map[string]Status
	}{
		{"reachable, review read", fakeSwarm{version: "SWARM/2024.3/2680035", review: swarm.Review{Author: "bob", Versions: []swarm.ReviewVersion{{Number: 1}}}}, 706,
			map[string]Status{CheckSwarmReach: OK, CheckSwarmReview: OK, CheckSwarmCallback: Skip}},
		{"no version route", fakeSwarm{verr: failure.Upstream(404, 0, errors.New("swarm version: HTTP 404"))}, 0,
			map[string]Status{CheckSwarmReach: Warn, CheckSwarmReview: Skip}},
		{"login refused", fakeSwarm{verr: failure.Upstream(401, 0, errors.New("swarm version: HTTP 401"))}, 706,
			map[string]Status{CheckSwarmReach: Fail, CheckSwarmReview: Skip}},
		{"unreachable", fakeSwarm{verr: failure.Errorf(failure.NetworkTimeout, "swarm version: dial tcp: i/o timeout")}, 706,
			map[string]Status{CheckSwarmReach: Fail}},
		{"review not visible", fakeSwarm{version: "SWARM/2024.3", rerr: failure.Upstream(403, 0, errors.New("swarm review 706: HTTP 403"))}, 706,
			map[string]Status{CheckSwarmReach: OK, CheckSwarmReview: Fail}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &Doctor{Swarm: &Swarm{API: tt.api, URL: "https://swarm.studio.test"}}
			got := verdicts(d.Run(context.Background(), Request{Review: tt.review}))
			for check, want := range tt.want {
				if v := got[check]; v.Status != want || (want == Fail && v.Fix == "") {
					t.Errorf("%s: %+v, want %s with a fix if failed", check, v, want)
				}
			}
		})
	}
	if got := verdicts((&Doctor{}).Run(context.Background(), Request{})); got[CheckSwarmReach].Status != Skip {
		t.Errorf("Swarm off: %+v, want skipped", got[CheckSwarmReach])
	}
}

func TestModelChecks(t *testing.T) {
	answer := func(content string, err error) func(context.Context, llm.Prompt) (llm.Completion, error) {
		return func(context.Context, llm.Prompt) (llm.Completion, error) {
			return llm.Completion{Content: []byte(content)}, err
		}
	}
	tests := []struct {
		name     string
		complete func(context.Context, llm.Prompt) (llm.Completion, error)
		context  int
		want     Status
		wantCtx  Status
		fixHas   string
	}{
		{"json answer", answer(`{"schema_version":"1.0","findings":[]}`, nil), 128000, OK, OK, ""},
		{"not json", answer("Sure! Here is the review:", nil), 128000, Warn, OK, "llmResponseFormat"},
		{"key refused", answer("", failure.Upstream(401, 0, errors.New("llm: HTTP 401"))), 128000, Fail, OK, "LLM_SECRET_ID"},
		{"form refused", answer("", failure.Upstream(400, 0, errors.New("llm: HTTP 400 response_format"))), 128000, Fail, OK, "json_object"},
		{"unreachable", answer("", failure.Errorf(failure.NetworkTimeout, "llm: dial tcp: timeout")), 0, Fail, Warn, "llmEndpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &Doctor{Model: &Model{Complete: tt.complete, Provider: "openai", Model: "gpt-4o-mini", Form: "response_format json_schema", ContextTokens: tt.context, ContextSource: "the model family table"}}
			got := verdicts(d.Run(context.Background(), Request{}))
			if v := got[CheckModel]; v.Status != tt.want || !strings.Contains(v.Fix, tt.fixHas) {
				t.Errorf("model: %+v, want %s with a fix naming %q", v, tt.want, tt.fixHas)
			}
			if v := got[CheckModelContext]; v.Status != tt.wantCtx {
				t.Errorf("context: %+v, want %s", v, tt.wantCtx)
			}
		})
	}
}

// A detecting client's findings replace what the settings say: the form it
// uses and the window the server reports.
func TestModelChecksReportWhatTheClientFound(t *testing.T) {
	m := &Model{Provider: "openai", Model: "smollm2", Form: "response_format auto", ContextTokens: 0,
		Complete: func(context.Context, llm.Prompt) (llm.Completion, error) {
			return llm.Completion{Content: []byte(`{"findings":[]}`)}, nil
		},
		Found: func(context.Context) (llm.Capabilities, bool) {
			return llm.Capabilities{ResponseFormat: llm.FormatJSONObjectSchema, Detected: true, ContextTokens: 4096, ContextSource: "/props n_ctx"}, true
		}}
	got := verdicts((&Doctor{Model: m}).Run(context.Background(), Request{}))
	if v := got[CheckModel]; v.Status != OK || !strings.Contains(v.Detail, "uses response_format "+llm.FormatJSONObjectSchema) {
		t.Errorf("model: %+v, want ok naming the form found", v)
	}
	if v := got[CheckModelContext]; v.Status != OK || !strings.Contains(v.Detail, "4096") || !strings.Contains(v.Detail, "/props n_ctx") {
		t.Errorf("context: %+v, want the server's 4096 and where it was read", v)
	}
}

type fakeSES struct {
	out *sesv2.GetEmailIdentityOutput
	err error
}

func (f fakeSES) GetEmailIdentity(context.Context, *sesv2.GetEmailIdentityInput, ...func(*sesv2.Options)) (*sesv2.GetEmailIdentityOutput, error) {
	return f.out, f.err
}

func TestMailChecks(t *testing.T) {
	tests := []struct {
		name string
		mail Mail
		want Status
	}{
		{"relay accepts the login", Mail{Provider: "smtp", Probe: func(context.Context) error { return nil }}, OK},
		{"relay refuses", Mail{Provider: "smtp", Probe: func(context.Context) error { return errors.New("535 5.7.8 authentication failed") }}, Fail},
		{"ses verified", Mail{Provider: "ses", SES: fakeSES{out: &sesv2.GetEmailIdentityOutput{VerifiedForSendingStatus: true, DkimAttributes: &sestypes.DkimAttributes{Status: sestypes.DkimStatusSuccess}}}}, OK},
		{"ses pending", Mail{Provider: "ses", SES: fakeSES{out: &sesv2.GetEmailIdentityOutput{VerificationStatus: sestypes.VerificationStatusPending}}}, Fail},
		{"ses unsigned", Mail{Provider: "ses", SES: fakeSES{out: &sesv2.GetEmailIdentityOutput{VerifiedForSendingStatus: true, DkimAttributes: &sestypes.DkimAttributes{Status: sestypes.DkimStatusFailed}}}}, Warn},
		{"ses unknown identity", Mail{Provider: "ses", SES: fakeSES{err: errors.New("NotFoundException")}}, Fail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.mail
			m.From, m.Identity = "criticizer@studio.test", "studio.test"
			got := verdicts((&Doctor{Mail: &m}).Run(context.Background(), Request{}))[CheckMail]
			if got.Status != tt.want || (tt.want == Fail && got.Fix == "") {
				t.Errorf("%+v, want %s", got, tt.want)
			}
		})
	}
}

func TestReportFailsOnlyOnFail(t *testing.T) {
	for _, tt := range []struct {
		statuses []Status
		failed   bool
	}{{[]Status{OK, Warn, Skip}, false}, {[]Status{OK, Fail}, true}, {nil, false}} {
		var r Report
		for _, s := range tt.statuses {
			r.Verdicts = append(r.Verdicts, Verdict{Status: s})
		}
		if r.Failed() != tt.failed {
			t.Errorf("%v: Failed() = %v", tt.statuses, !tt.failed)
		}
	}
	broken := Verdict{Check: CheckP4Connection, Status: Fail, Detail: "no p4", Fix: "p4LayerPath"}
	if r := (&Doctor{Broken: []Verdict{broken}}).Run(context.Background(), Request{}); !r.Failed() || r.Verdicts[0] != broken {
		t.Errorf("a part that could not be built: %+v", r)
	}
}
