package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

// grantedOn reports whether some Allow grant has action exactly on a
// resource whose JSON contains fragment.
func grantedOn(g []string, action, fragment string) bool {
	for _, s := range g {
		a, res, _ := strings.Cut(s, " on ")
		if a == action && strings.Contains(res, fragment) {
			return true
		}
	}
	return false
}

// checkedInContext is cdk.json's context for env, with a staged p4 layer.
func checkedInContext(t *testing.T, env string, overrides map[string]any) map[string]any {
	t.Helper()
	checkedIn := cdkContext(t)
	ctx := checkedIn
	ctx[ctxEnv] = env
	delete(ctx, ctxAssetRoot)
	o := map[string]any{}
	if env != "local" {
		o["p4LayerPath"], o["p4LayerSha256"] = fakeLayer(t), fakeLayerSHA256
	}
	for k, v := range overrides {
		o[k] = v
	}
	ctx[ctxOverrides] = o
	return ctx
}

// policyStatements are the Allow statements attached to a function's role.
func policyStatements(t *testing.T, m map[string]any, fnID string) []map[string]any {
	t.Helper()
	role := props(m, fnID)["Role"].(map[string]any)["Fn::GetAtt"].([]any)[0].(string)
	var out []map[string]any
	for _, r := range resources(m) {
		if r["Type"] != "AWS::IAM::Policy" {
			continue
		}
		p := r["Properties"].(map[string]any)
		for _, ref := range p["Roles"].([]any) {
			if ref.(map[string]any)["Ref"] != role {
				continue
			}
			for _, s := range p["PolicyDocument"].(map[string]any)["Statement"].([]any) {
				if st := s.(map[string]any); st["Effect"] == "Allow" {
					out = append(out, st)
				}
			}
		}
	}
	return out
}

// tableAccess maps each DynamoDB action a function may take on the jobs
// table to the item prefixes it is limited to ("<table>" when unconditioned,
// "<index:NAME>" on an index).
func tableAccess(t *testing.T, m map[string]any, fnID string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, st := range policyStatements(t, m, fnID) {
		res, _ := json.Marshal(st["Resource"])
		if !strings.Contains(string(res), `"JobsTable"`) {
			continue
		}
		var scope []string
		if strings.Contains(string(res), "/index/") {
			// CDK merges the grants of one action into one statement: every index named.
			for _, part := range strings.Split(string(res), "/index/")[1:] {
				scope = append(scope, "<index:"+strings.Split(part, `"`)[0]+">")
			}
		} else if c, ok := st["Condition"].(map[string]any); ok {
			like := c["ForAllValues:StringLike"].(map[string]any)["dynamodb:LeadingKeys"]
			for _, p := range stringsOf(like) {
				scope = append(scope, strings.TrimSuffix(p, "*"))
			}
		} else {
			scope = []string{"<table>"}
		}
		for _, a := range stringsOf(st["Action"]) {
			out[a] = append(out[a], scope...)
		}
	}
	for a := range out {
		slices.Sort(out[a])
		out[a] = slices.Compact(out[a])
	}
	return out
}

// TestTableItemAccess: each function may take only the DynamoDB actions it
// needs, each only on the item types it touches (rule IAM-1). The emulator
// does not enforce IAM, so this test is the proof.
func TestTableItemAccess(t *testing.T) {
	for _, env := range []string{"local", "dev", "staging", "prod"} {
		_, m := synth(t, checkedInContext(t, env, map[string]any{"emailProvider": "ses", "sesConfigurationSet": "criticizer-" + env}))
		want := map[string]map[string][]string{
			// Internet-facing: writes only what it creates, reads only what /jobs/{id} shows.
			"WebhookFunction": {
				"dynamodb:PutItem":    {"IDEM#", "JOB#"},
				"dynamodb:UpdateItem": {"CL#"},
				"dynamodb:GetItem":    {"CL#", "IDEM#", "JOB#"},
				"dynamodb:Query":      {"OUTBOX#"},
			},
			// LEDGER#: the rerun ledger; fetch and review read it, only review writes it.
			// OUTCOME#: fetch records who was on a review when first fetched (standing).
			"FetchFunction": {"dynamodb:GetItem": {"JOB#"}, "dynamodb:UpdateItem": {"JOB#"}, "dynamodb:Query": {"LEDGER#"}, "dynamodb:PutItem": {"OUTCOME#"}},
			// BUDGET#: the daily token counter; OUTCOME#: review decides
			// what is withheld and resolved (shared/decide).
			"ReviewFunction": {"dynamodb:GetItem": {"BUDGET#", "JOB#"}, "dynamodb:UpdateItem": {"BUDGET#", "JOB#", "OUTCOME#"}, "dynamodb:PutItem": {"LEDGER#", "OUTCOME#"},
				"dynamodb:DeleteItem": {"OUTCOME#"}, "dynamodb:Query": {"LEDGER#", "OUTCOME#"}},
			// OUTCOME#: each posted finding's fate (notify records and
			// settles, the sweeper settles and moves its watch list on).
			"NotifyFunction": {
				"dynamodb:GetItem":    {"JOB#", "OUTBOX#"},
				"dynamodb:UpdateItem": {"JOB#", "OUTBOX#", "OUTCOME#"},
				"dynamodb:PutItem":    {"OUTBOX#", "OUTCOME#"},
				"dynamodb:DeleteItem": {"OUTCOME#"},
				"dynamodb:Query":      {"DELIVERY#", "OUTBOX#", "OUTCOME#"},
			},
			"SweeperFunction": {
				"dynamodb:GetItem":    {"JOB#", "OUTBOX#"},
				"dynamodb:UpdateItem": {"JOB#", "OUTBOX#", "OUTCOME#"},
				// The outcome watch list moves its entries on.
				"dynamodb:PutItem":    {"OUTCOME#"},
				"dynamodb:DeleteItem": {"OUTCOME#"},
				"dynamodb:Query":      {"<index:doubt>", "<index:sweep>", "DELIVERY#", "OUTBOX#", "OUTCOME#"},
				"dynamodb:Scan":       {"<table>"},
			},
			"SesEventsFunction": {"dynamodb:PutItem": {"DELIVERY#"}},
		}
		if env == "local" { // the weekly digest is on there (cdk.json)
			// DIGEST#: review decides and writes each job's week entry; the
			// digest reads one week's entries and the reviews' outcomes, and
			// moves its once-per-week rows.
			want["ReviewFunction"]["dynamodb:PutItem"] = []string{"DIGEST#", "LEDGER#", "OUTCOME#"}
			want["DigestFunction"] = map[string][]string{"dynamodb:Query": {"DELIVERY#", "DIGEST#", "OUTCOME#"}, "dynamodb:UpdateItem": {"DIGEST#"}}
		}
		for fn, w := range want {
			got := tableAccess(t, m, fn)
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(w)
			var gm, wm map[string][]string
			_ = json.Unmarshal(gb, &gm)
			_ = json.Unmarshal(wb, &wm)
			if fmt.Sprint(gm) != fmt.Sprint(wm) {
				t.Errorf("%s %s table access = %s, want %s", env, fn, gb, wb)
			}
		}
	}
}

// TestItemPrefixesMatchTheStore: the key prefixes the grants name are the
// ones the packages that own each item type write.
func TestItemPrefixesMatchTheStore(t *testing.T) {
	for prefix, file := range map[string]string{
		itemJob: "../shared/store/item.go", itemIdempotency: "../shared/store/item.go", itemChangelist: "../shared/store/item.go",
		itemOutbox: "../shared/outbox/outbox.go", itemDelivery: "../shared/evidence/evidence.go", itemBudget: "../shared/store/budget.go",
		itemLedger: "../shared/ledger/store.go", itemSwarmEvent: "../shared/swarmevents/deliveries.go", itemDigest: "../shared/weekly/entry.go",
	} {
		b, err := os.ReadFile(filepath.Clean(file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"`+prefix) {
			t.Errorf("%s does not write partition keys starting %q: the grants would deny its items", file, prefix)
		}
	}
}

// assertSESScoped: notify may send only as the identity, only through the
// configuration set; the SES events path has a DLQ that pages and a rule
// that matches only that configuration set.
func assertSESScoped(t *testing.T, m map[string]any, configSet string) {
	t.Helper()
	var stmts []string
	for _, st := range policyStatements(t, m, "NotifyFunction") {
		if slices.Contains(stringsOf(st["Action"]), "ses:SendEmail") {
			b, _ := json.Marshal(st)
			stmts = append(stmts, string(b))
		}
	}
	if len(stmts) != 1 || strings.Contains(stmts[0], `"Resource":"*"`) || !strings.Contains(stmts[0], ":configuration-set/"+configSet) ||
		!strings.Contains(stmts[0], ":identity/") || !strings.Contains(stmts[0], `"ses:FromAddress"`) {
		t.Errorf("notify ses:SendEmail statements = %v: want the identity and configuration set %s, from the configured address", stmts, configSet)
	}
	pattern, _ := json.Marshal(props(m, "SesEventsRule")["EventPattern"])
	if !strings.Contains(string(pattern), `"ses:configuration-set":["`+configSet+`"]`) {
		t.Errorf("SES events rule pattern = %s: want only %s's events", pattern, configSet)
	}
	fn := props(m, "SesEventsFunction")
	if dlq, _ := json.Marshal(fn["DeadLetterConfig"]); !strings.Contains(string(dlq), "SesEventsDLQ") {
		t.Errorf("sesevents dead-letter config = %s", dlq)
	}
	targets, _ := json.Marshal(props(m, "SesEventsRule")["Targets"])
	if !strings.Contains(string(targets), "SesEventsDLQ") {
		t.Errorf("SES events rule target has no DLQ: %s", targets)
	}
	for _, a := range []string{"SesEventsErrorsAlarm", "SesEventsDlqAlarm"} {
		if acts, _ := props(m, a)["AlarmActions"].([]any); len(acts) == 0 {
			t.Errorf("%s missing or not paging", a)
		}
	}
}

// TestPrivatePathToPerforce: the checked-in prod places fetch in the
// studio's VPC by ID and creates the endpoints that keep AWS calls off a
// NAT; the other functions stay out unless allFunctions.
func TestPrivatePathToPerforce(t *testing.T) {
	_, m := synth(t, checkedInContext(t, "prod", nil))
	vc, _ := props(m, "FetchFunction")["VpcConfig"].(map[string]any)
	if fmt.Sprint(vc["SubnetIds"]) != "[subnet-0a1b2c3d4e5f60718 subnet-0b1c2d3e4f5a60718]" || fmt.Sprint(vc["SecurityGroupIds"]) != "[sg-0a1b2c3d4e5f60718]" {
		t.Errorf("fetch VpcConfig = %v", vc)
	}
	for _, fn := range []string{"WebhookFunction", "ReviewFunction", "NotifyFunction", "SweeperFunction"} {
		if props(m, fn)["VpcConfig"] != nil {
			t.Errorf("%s is in the VPC without allFunctions", fn)
		}
	}
	if !allowed(grants(t, m, "FetchFunction"), "ec2:CreateNetworkInterface", "*") && !strings.Contains(fmt.Sprint(resources(m)), "AWSLambdaVPCAccessExecutionRole") {
		t.Error("fetch's role cannot create its network interfaces")
	}
	endpoints := map[string]string{}
	for id, r := range resources(m) {
		if r["Type"] == "AWS::EC2::VPCEndpoint" {
			p := r["Properties"].(map[string]any)
			svc, _ := json.Marshal(p["ServiceName"])
			endpoints[id] = fmt.Sprint(p["VpcEndpointType"]) + " " + string(svc)
			if p["VpcId"] != "vpc-0a1b2c3d4e5f60718" {
				t.Errorf("%s in VPC %v", id, p["VpcId"])
			}
		}
	}
	for id, want := range map[string]string{
		"VpcEndpointDynamodb": "Gateway", "VpcEndpointS3": "Gateway",
		"VpcEndpointSqs": "Interface", "VpcEndpointSecretsmanager": "Interface", "VpcEndpointKms": "Interface",
	} {
		if !strings.HasPrefix(endpoints[id], want+" ") {
			t.Errorf("endpoint %s = %q, want %s", id, endpoints[id], want)
		}
	}
	if rt := props(m, "VpcEndpointDynamodb")["RouteTableIds"]; fmt.Sprint(rt) != "[rtb-0a1b2c3d4e5f60718 rtb-0b1c2d3e4f5a60718]" {
		t.Errorf("gateway endpoint route tables = %v", rt)
	}
	sg, _ := json.Marshal(props(m, "VpcEndpointSecurityGroup"))
	if !strings.Contains(string(sg), `"SourceSecurityGroupId":"sg-0a1b2c3d4e5f60718"`) || !strings.Contains(string(sg), `"FromPort":443`) || strings.Contains(string(sg), "0.0.0.0/0") {
		t.Errorf("endpoint security group = %s: want HTTPS from the functions' group only", sg)
	}

	// allFunctions: every function in the VPC; bedrock gets its endpoint.
	_, m = synth(t, checkedInContext(t, "prod", map[string]any{"vpc": map[string]any{
		"vpcId": "vpc-0a1b2c3d", "subnetIds": []any{"subnet-0a1b2c3d"}, "securityGroupIds": []any{"sg-0a1b2c3d"},
		"allFunctions": true, "createEndpoints": true, "routeTableIds": []any{"rtb-0a1b2c3d"}}}))
	for _, fn := range append(functionIDs, "SesEventsFunction") {
		if props(m, fn)["VpcConfig"] == nil {
			t.Errorf("allFunctions: %s not in the VPC", fn)
		}
	}
	if props(m, "VpcEndpointBedrockRuntime") == nil {
		t.Error("allFunctions with bedrock: no bedrock-runtime endpoint")
	}
	// Without createEndpoints the VPC's own endpoints serve: none created.
	_, m = synth(t, checkedInContext(t, "prod", map[string]any{"vpc": map[string]any{
		"vpcId": "vpc-0a1b2c3d", "subnetIds": []any{"subnet-0a1b2c3d"}, "securityGroupIds": []any{"sg-0a1b2c3d"},
		"createEndpoints": false, "routeTableIds": []any{}}}))
	for id, r := range resources(m) {
		if r["Type"] == "AWS::EC2::VPCEndpoint" || r["Type"] == "AWS::EC2::SecurityGroup" {
			t.Errorf("createEndpoints false but %s is created", id)
		}
	}
}

// TestCustomerManagedKey: with kmsKey (checked-in prod: create) the table,
// queues, artifact buckets, secrets, log groups, topic and function
// environments use it; without it (dev) none references a key.
func TestCustomerManagedKey(t *testing.T) {
	_, m := synth(t, checkedInContext(t, "prod", nil))
	key := `{"Fn::GetAtt":["DataKey","Arn"]}`
	has := func(id, field string) bool {
		b, _ := json.Marshal(props(m, id)[field])
		return strings.Contains(string(b), key) || strings.Contains(string(b), `"Ref":"DataKey"`)
	}
	if r := resources(m)["DataKey"]; r == nil || r["Properties"].(map[string]any)["EnableKeyRotation"] != true {
		t.Fatal("no rotated DataKey")
	}
	checks := map[string]string{"JobsTable": "SSESpecification", "RawArtifacts": "BucketEncryption", "RedactedArtifacts": "BucketEncryption",
		"FetchQueue": "KmsMasterKeyId", "NotifyDLQ": "KmsMasterKeyId", "SesEventsDLQ": "KmsMasterKeyId", "WebhookSecret": "KmsKeyId", "P4Secret": "KmsKeyId",
		"FetchFunctionLogs": "KmsKeyId", "ApiAccessLogs": "KmsKeyId", "AlarmTopic": "KmsMasterKeyId", "WebhookFunction": "KmsKeyArn", "FetchFunction": "KmsKeyArn"}
	for id, field := range checks {
		if !has(id, field) {
			t.Errorf("%s.%s does not use the data key: %v", id, field, props(m, id)[field])
		}
	}
	// The functions may use the key (IAM); the webhook among them.
	if !allowed(grants(t, m, "WebhookFunction"), "kms:Decrypt", "DataKey") {
		t.Error("webhook cannot decrypt with the data key")
	}
	_, m = synth(t, checkedInContext(t, "dev", nil))
	if b, _ := json.Marshal(m["Resources"]); strings.Contains(string(b), "DataKey") || strings.Contains(string(b), "AWS::KMS::Key") {
		t.Error("dev without kmsKey references a key")
	}
}

// TestAPIGatewayCloudWatchRole: access logging deploys on a fresh account:
// the stack creates the account-level role (default), uses a given one, or
// leaves an account that already has one alone.
func TestAPIGatewayCloudWatchRole(t *testing.T) {
	stageDependsOnAccount := func(m map[string]any) bool {
		for _, r := range resources(m) {
			if r["Type"] == "AWS::ApiGateway::Stage" {
				return strings.Contains(fmt.Sprint(r["DependsOn"]), "ApiGatewayAccount")
			}
		}
		return false
	}
	_, m := synth(t, checkedInContext(t, "dev", nil))
	acct, _ := json.Marshal(props(m, "ApiGatewayAccount"))
	if !strings.Contains(string(acct), "ApiGatewayCloudWatchRole") || !stageDependsOnAccount(m) {
		t.Errorf("dev: account = %s, stage waits for it: %v", acct, stageDependsOnAccount(m))
	}
	if rb, _ := json.Marshal(resources(m)["ApiGatewayCloudWatchRole"]); !strings.Contains(string(rb), "AmazonAPIGatewayPushToCloudWatchLogs") {
		t.Errorf("created role = %s", rb)
	}
	arn := "arn:aws:iam::123456789012:role/apigw-logs"
	_, m = synth(t, checkedInContext(t, "dev", map[string]any{"apiGatewayCloudWatchRole": arn}))
	if props(m, "ApiGatewayAccount")["CloudWatchRoleArn"] != arn || resources(m)["ApiGatewayCloudWatchRole"] != nil || !stageDependsOnAccount(m) {
		t.Errorf("given role: account = %v", props(m, "ApiGatewayAccount"))
	}
	_, m = synth(t, checkedInContext(t, "dev", map[string]any{"apiGatewayCloudWatchRole": "existing"}))
	if resources(m)["ApiGatewayAccount"] != nil || resources(m)["ApiGatewayCloudWatchRole"] != nil {
		t.Error("existing: the stack still sets the account")
	}
}

// TestSynthRefuses: settings the runtime would refuse, or that would expose
// code or credentials, fail synth with an error naming the setting.
func TestSynthRefuses(t *testing.T) {
	cases := []struct {
		env       string
		overrides map[string]any
		want      string
	}{
		// ssl: Perforce without its fingerprint: p4 would refuse the server.
		{"prod", map[string]any{"p4TrustFingerprint": ""}, "p4TrustFingerprint is empty"},
		{"dev", map[string]any{"p4Port": "ssl64:p4.example.com:1666", "p4TrustFingerprint": ""}, "p4TrustFingerprint is empty"},
		{"dev", map[string]any{"p4TrustFingerprint": "AB:CD"}, "p4TrustFingerprint"},
		// The allow-list through the runtime's own parser.
		{"dev", map[string]any{"depotAllowList": []any{"//depot/a/*/..."}}, "depotAllowList"},
		{"dev", map[string]any{"depotAllowList": []any{"//depot/../secret/..."}}, "depotAllowList"},
		{"dev", map[string]any{"depotAllowList": []any{"//depot/a/...@123"}}, "depotAllowList"},
		{"dev", map[string]any{"depotAllowList": []any{}}, "depotAllowList"},
		{"dev", map[string]any{"depotAllowList": []any{"//depot/a/...,//depot/b/..."}}, "comma"},
		// Plain http:// outside local only to loopback.
		{"dev", map[string]any{"llmProvider": "openai", "llmEndpoint": "http://llm.internal.example.com"}, "llmEndpoint"},
		{"staging", map[string]any{"swarmUrl": "http://swarm.example.com"}, "swarmUrl"},
		{"prod", map[string]any{"smtpLookupUrl": "http://relay.example.com/messages"}, "smtpLookupUrl"},
		{"prod", map[string]any{"emailProvider": "smtp", "smtpHost": "relay.example.com", "smtpTLS": "none"}, "smtpTLS none"},
		{"dev", map[string]any{"llmProvider": "openai", "llmEndpoint": ""}, "llmEndpoint is empty"},
		// VPC placement by well-formed IDs only; not on the emulator.
		{"prod", map[string]any{"vpc": map[string]any{"vpcId": "my-vpc", "subnetIds": []any{"subnet-0a1b2c3d"}, "securityGroupIds": []any{"sg-0a1b2c3d"}}}, "vpc.vpcId"},
		{"prod", map[string]any{"vpc": map[string]any{"vpcId": "vpc-0a1b2c3d", "subnetIds": []any{}, "securityGroupIds": []any{"sg-0a1b2c3d"}}}, "vpc.subnetIds is empty"},
		{"prod", map[string]any{"vpc": map[string]any{"vpcId": "vpc-0a1b2c3d", "subnetIds": []any{"subnet-0a1b2c3d"}, "securityGroupIds": []any{"sg-0a1b2c3d"}, "createEndpoints": true, "routeTableIds": []any{}}}, "vpc.routeTableIds is empty"},
		{"local", map[string]any{"vpc": map[string]any{"vpcId": "vpc-0a1b2c3d", "subnetIds": []any{"subnet-0a1b2c3d"}, "securityGroupIds": []any{"sg-0a1b2c3d"}}}, "vpc: not supported in local"},
		{"dev", map[string]any{"kmsKey": "alias/mine"}, "kmsKey"},
		{"dev", map[string]any{"apiGatewayCloudWatchRole": "yes"}, "apiGatewayCloudWatchRole"},
	}
	for _, c := range cases {
		ctx := checkedInContext(t, c.env, c.overrides)
		_, _, err := LoadConfig(testApp(t, ctx).Node())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: err = %v, want one naming %q", c.env, c.overrides, err, c.want)
		}
	}
	// Loopback http:// stays allowed outside local (the staging-shaped run).
	ok := checkedInContext(t, "staging", map[string]any{"llmEndpoint": "http://127.0.0.1:8089", "smtpLookupUrl": "http://127.0.0.1:9/messages"})
	if _, _, err := LoadConfig(testApp(t, ok).Node()); err != nil {
		t.Errorf("loopback endpoints refused: %v", err)
	}
}

// TestCheckedInSynthHasNoWarnings: dev, staging and prod synthesize without
// a CDK warning (an unacknowledged one usually means a lookup or a setting
// the stack does not mean to rely on).
func TestCheckedInSynthHasNoWarnings(t *testing.T) {
	for _, env := range []string{"dev", "staging", "prod"} {
		ctx := checkedInContext(t, env, nil)
		ctx[ctxAssetRoot] = dummyAssets(t)
		_, stack, err := newApp(t.TempDir(), withSamples(ctx))
		if err != nil {
			t.Fatalf("%s: %v", env, err)
		}
		check(t, env+" warnings", func() {
			assertions.Annotations_FromStack(stack).HasNoWarning(jsii.String("*"), assertions.Match_AnyValue())
		})
	}
}

// TestArtifactWrites: each stage may write only the artifacts it produces,
// and those names are the ones the stages use.
func TestArtifactWrites(t *testing.T) {
	_, m := synth(t, checkedInContext(t, "local", nil))
	for _, c := range []struct {
		fn, bucket, pattern string
		ok                  bool
	}{
		{"FetchFunction", "RawArtifacts", "/jobs/*/changeset.raw.json", true},
		{"FetchFunction", "RedactedArtifacts", "/jobs/*/changeset.json", true},
		{"FetchFunction", "RedactedArtifacts", `"Arn"]},"/*"]`, false}, // the whole bucket
		{"ReviewFunction", "RedactedArtifacts", "/jobs/*/review.json", true},
		{"ReviewFunction", "RedactedArtifacts", "/jobs/*/chunks/*", true},
		{"ReviewFunction", "RedactedArtifacts", "/jobs/*/changeset.json", false},
		{"ReviewFunction", "RedactedArtifacts", `"Arn"]},"/*"]`, false}, // the whole bucket
	} {
		found := false
		for _, g := range grants(t, m, c.fn) {
			if strings.HasPrefix(g, "s3:PutObject on ") && strings.Contains(g, c.bucket) && strings.Contains(g, c.pattern) {
				found = true
			}
		}
		if found != c.ok {
			t.Errorf("%s s3:PutObject on %s%s: %v, want %v", c.fn, c.bucket, c.pattern, found, c.ok)
		}
	}
	for file, names := range map[string][]string{
		"../shared/fetchstage/fetch.go":    {`"changeset.raw.json"`, `"changeset.json"`},
		"../shared/llmstage/llm.go":        {`"review.json"`, `"chunks/"`},
		"../shared/artifacts/artifacts.go": {`"jobs/" + jobID + "/"`},
	} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if !strings.Contains(string(b), n) {
				t.Errorf("%s no longer names %s: the artifact grants would deny its writes", file, n)
			}
		}
	}
}

func TestPlainHTTPAndSSLPorts(t *testing.T) {
	for host, want := range map[string]bool{"localhost": true, "127.0.0.1": true, "127.9.9.9": true, "::1": true, "[::1]": true,
		"10.0.0.1": false, "llm.internal": false, "localhost.example.com": false, "": false} {
		if isLoopback(host) != want {
			t.Errorf("isLoopback(%q) = %v", host, !want)
		}
	}
	for port, ssl := range map[string]bool{"ssl:p4:1666": true, "ssl4:p4:1666": true, "ssl6:[::1]:1666": true, "ssl46:p4:1666": true,
		"ssl64:p4:1666": true, "tcp:p4:1666": false, "p4:1666": false, "1666": false, "/tmp/depot": false, "sslx:p4:1666": false} {
		if sslPortRe.MatchString(port) != ssl {
			t.Errorf("ssl port %q = %v", port, !ssl)
		}
	}
	for _, c := range []struct {
		local bool
		url   string
		bad   bool
	}{
		{false, "http://llm.example.com", true}, {false, "http://127.0.0.1:8089", false}, {false, "http://[::1]:8089", false},
		{false, "https://llm.example.com", false}, {true, "http://llm.example.com", false},
	} {
		var p problems
		checkURL(EnvConfig{isLocal: c.local}, &p, "llmEndpoint", c.url)
		if (len(p) > 0) != c.bad {
			t.Errorf("local=%v %s: problems %v", c.local, c.url, p)
		}
	}
}

// TestPrivateSwarmPutsEveryCallerInTheVPC: in every environment, a Swarm
// reachable only inside the studio's network (a private host, or
// swarmPrivate) places every function that calls it (fetch, llm, notify,
// the sweeper) in the VPC, and the others stay out; without a VPC, synth
// refuses it; a public Swarm changes no placement.
func TestPrivateSwarmPutsEveryCallerInTheVPC(t *testing.T) {
	vpc := map[string]any{"vpcId": "vpc-0a1b2c3d", "subnetIds": []any{"subnet-0a1b2c3d"}, "securityGroupIds": []any{"sg-0a1b2c3d"},
		"createEndpoints": true, "routeTableIds": []any{"rtb-0a1b2c3d"}}
	callers := []string{"FetchFunction", "ReviewFunction", "NotifyFunction", "SweeperFunction"}
	for _, env := range []string{"dev", "staging", "prod"} {
		for _, c := range []struct {
			name     string
			over     map[string]any
			inVPC    []string
			notInVPC []string
		}{
			{"private host", map[string]any{"vpc": vpc, "swarmUrl": "https://10.1.2.3"}, callers, []string{"WebhookFunction"}},
			{"internal name", map[string]any{"vpc": vpc, "swarmUrl": "https://swarm.studio.internal"}, callers, []string{"WebhookFunction"}},
			{"declared private", map[string]any{"vpc": vpc, "swarmUrl": "https://swarm.example.com", "swarmPrivate": true}, callers, []string{"WebhookFunction"}},
			{"public Swarm", map[string]any{"vpc": vpc, "swarmUrl": "https://swarm.example.com"}, []string{"FetchFunction"}, []string{"ReviewFunction", "NotifyFunction", "SweeperFunction", "WebhookFunction"}},
		} {
			t.Run(env+"/"+c.name, func(t *testing.T) {
				_, m := synth(t, checkedInContext(t, env, c.over))
				for _, fn := range c.inVPC {
					if props(m, fn)["VpcConfig"] == nil {
						t.Errorf("%s is not in the VPC", fn)
					}
				}
				for _, fn := range c.notInVPC {
					if props(m, fn)["VpcConfig"] != nil {
						t.Errorf("%s is in the VPC", fn)
					}
				}
			})
		}
		if env == "prod" {
			continue // the checked-in prod has its VPC
		}
		// No VPC for a private Swarm (the checked-in dev and staging have
		// none): refused, naming the setting.
		for _, over := range []map[string]any{{"swarmUrl": "https://192.168.4.20/swarm"}, {"swarmUrl": "https://swarm.example.com", "swarmPrivate": true}} {
			ctx := checkedInContext(t, env, over)
			if _, _, err := LoadConfig(testApp(t, ctx).Node()); err == nil || !strings.Contains(err.Error(), "is private") {
				t.Errorf("%s %v: error %v, want one naming the private Swarm", env, over, err)
			}
		}
	}
}
