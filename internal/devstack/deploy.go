package devstack

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
)

// The default CDK bootstrap qualifier, as in DefaultStackSynthesizer.
const (
	bootstrapQualifier = "hnb659fds"
	bootstrapParam     = "/cdk-bootstrap/" + bootstrapQualifier + "/version"
	// bootstrapVersion satisfies the template's CheckBootstrapVersion rule (>= 6).
	bootstrapVersion = "21"
	// Templates larger than this must be passed by TemplateURL (CloudFormation quota).
	templateBodyMaxBytes = 51200
)

// Outputs are a stack's CloudFormation outputs by key.
type Outputs map[string]string

// LocalAPIURL is the emulator's URL of the stack's RestApi stage, e.g.
// http://127.0.0.1:4566/_aws/execute-api/<ApiId>/<ApiStage>. Append the path
// (/webhooks/changelist). On AWS use Outputs["ApiUrl"] instead.
func (o Outputs) LocalAPIURL(endpoint string) string {
	return strings.TrimRight(endpoint, "/") + "/_aws/execute-api/" + o["ApiId"] + "/" + o["ApiStage"]
}

// EmulatorConfig is an aws.Config for the emulator at endpoint: static
// credentials test/test, region us-east-1, BaseEndpoint = endpoint. Use
// NewS3Client for S3 (path-style addressing).
func EmulatorConfig(endpoint string) aws.Config {
	return aws.Config{
		Region:       DefaultRegion,
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		BaseEndpoint: aws.String(endpoint),
		// Like `cdk deploy`, don't give up on a transient emulator hiccup.
		RetryMaxAttempts: 5,
	}
}

// NewS3Client returns an S3 client using path-style addressing (required by
// emulators on 127.0.0.1; harmless on AWS).
func NewS3Client(cfg aws.Config) *s3.Client {
	return s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
}

// Deploy deploys the stack stackName of the cloud assembly in assemblyDir the
// way `cdk deploy` does with the default synthesizer: publish its file assets to
// the bootstrap bucket cdk-hnb659fds-assets-<account>-<region> (created if
// missing), make sure the bootstrap version parameter exists, then CreateStack or
// UpdateStack ("No updates are to be performed" is success) and wait. A failed
// stack operation returns an error carrying the failed resources' reasons.
func Deploy(ctx context.Context, cfg aws.Config, assemblyDir, stackName string) (Outputs, error) {
	start := time.Now()
	am, err := readAssembly(assemblyDir, stackName)
	if err != nil {
		return nil, err
	}
	account, err := accountID(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s3c := NewS3Client(cfg)
	published, err := publishAssets(ctx, s3c, assemblyDir, am.assets, account, cfg.Region)
	if err != nil {
		return nil, err
	}
	if _, err := ssm.NewFromConfig(cfg).PutParameter(ctx, &ssm.PutParameterInput{
		Name: aws.String(bootstrapParam), Value: aws.String(bootstrapVersion),
		Type: ssmtypes.ParameterTypeString, Overwrite: aws.Bool(true),
	}); err != nil {
		return nil, fmt.Errorf("put %s: %w", bootstrapParam, err)
	}

	body, err := os.ReadFile(filepath.Join(assemblyDir, am.templateFile))
	if err != nil {
		return nil, err
	}
	var tmplBody, tmplURL *string
	if len(body) <= templateBodyMaxBytes {
		tmplBody = aws.String(string(body))
	} else {
		loc, ok := published[am.templateFile]
		if !ok {
			return nil, fmt.Errorf("template %s is %d bytes (> %d) and is not a published asset", am.templateFile, len(body), templateBodyMaxBytes)
		}
		// The virtual-host-free S3 URL form; the emulator reads /<bucket>/<key>.
		tmplURL = aws.String(fmt.Sprintf("https://s3.%s.amazonaws.com/%s/%s", cfg.Region, loc.bucket, loc.key))
	}

	cfn := cloudformation.NewFromConfig(cfg)
	caps := []cfntypes.Capability{cfntypes.CapabilityCapabilityIam, cfntypes.CapabilityCapabilityNamedIam, cfntypes.CapabilityCapabilityAutoExpand}

	st, err := describeStack(ctx, cfn, stackName)
	if err != nil {
		return nil, err
	}
	if st != nil && strings.HasSuffix(string(st.StackStatus), "_IN_PROGRESS") {
		Logf("stack %s is %s; waiting", stackName, st.StackStatus)
		if st, err = waitStack(ctx, cfn, stackName, time.Time{}); err != nil && st == nil {
			return nil, err
		}
	}
	if st != nil {
		switch st.StackStatus {
		case cfntypes.StackStatusRollbackComplete, cfntypes.StackStatusRollbackFailed, cfntypes.StackStatusCreateFailed, cfntypes.StackStatusDeleteFailed:
			// A stack that never got created can only be deleted (as `cdk deploy` does).
			Logf("stack %s is %s; deleting it before creating again", stackName, st.StackStatus)
			if err := deleteStack(ctx, cfn, stackName); err != nil {
				return nil, err
			}
			st = nil
		case cfntypes.StackStatusDeleteComplete:
			st = nil
		}
	}

	opStart := time.Now().Add(-time.Second)
	if st == nil {
		Logf("creating stack %s", stackName)
		if _, err := cfn.CreateStack(ctx, &cloudformation.CreateStackInput{
			StackName: aws.String(stackName), TemplateBody: tmplBody, TemplateURL: tmplURL,
			Capabilities: caps, OnFailure: cfntypes.OnFailureRollback,
		}); err != nil {
			return nil, fmt.Errorf("create stack %s: %w", stackName, err)
		}
	} else {
		Logf("updating stack %s (%s)", stackName, st.StackStatus)
		_, err := cfn.UpdateStack(ctx, &cloudformation.UpdateStackInput{
			StackName: aws.String(stackName), TemplateBody: tmplBody, TemplateURL: tmplURL, Capabilities: caps,
		})
		if err != nil {
			if !isNoUpdates(err) {
				return nil, fmt.Errorf("update stack %s: %w", stackName, err)
			}
			Logf("stack %s: no changes", stackName)
			return fixSecretArns(ctx, cfg, outputsOf(st))
		}
	}
	final, err := waitStack(ctx, cfn, stackName, opStart)
	if err != nil {
		return nil, err
	}
	Logf("stack %s %s in %s", stackName, final.StackStatus, time.Since(start).Round(100*time.Millisecond))
	return fixSecretArns(ctx, cfg, outputsOf(final))
}

// StackOutputs returns the outputs of an existing stack.
func StackOutputs(ctx context.Context, cfg aws.Config, stackName string) (Outputs, error) {
	st, err := describeStack(ctx, cloudformation.NewFromConfig(cfg), stackName)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, fmt.Errorf("stack %s does not exist", stackName)
	}
	return fixSecretArns(ctx, cfg, outputsOf(st))
}

// ---- assembly ---------------------------------------------------------------

type assetLocation struct{ bucket, key string }

type fileAsset struct {
	id           string
	path         string // relative to the assembly
	packaging    string // "file" or "zip"
	destinations []assetLocation
}

type assemblyStack struct {
	templateFile string
	assets       []fileAsset
}

// readAssembly finds the stack's template and asset manifest via manifest.json.
func readAssembly(dir, stackName string) (*assemblyStack, error) {
	var m struct {
		Artifacts map[string]struct {
			Type       string `json:"type"`
			Properties struct {
				TemplateFile string `json:"templateFile"`
				File         string `json:"file"`
			} `json:"properties"`
			Dependencies []string `json:"dependencies"`
		} `json:"artifacts"`
	}
	if err := readJSON(filepath.Join(dir, "manifest.json"), &m); err != nil {
		return nil, err
	}
	art, ok := m.Artifacts[stackName]
	if !ok || art.Type != "aws:cloudformation:stack" {
		var names []string
		for k, a := range m.Artifacts {
			if a.Type == "aws:cloudformation:stack" {
				names = append(names, k)
			}
		}
		return nil, fmt.Errorf("stack %s not in the cloud assembly %s (stacks: %s)", stackName, dir, strings.Join(names, ", "))
	}
	out := &assemblyStack{templateFile: art.Properties.TemplateFile}
	for _, dep := range art.Dependencies {
		a := m.Artifacts[dep]
		if a.Type != "cdk:asset-manifest" {
			continue
		}
		var am struct {
			Files map[string]struct {
				Source struct {
					Path      string `json:"path"`
					Packaging string `json:"packaging"`
				} `json:"source"`
				Destinations map[string]struct {
					BucketName string `json:"bucketName"`
					ObjectKey  string `json:"objectKey"`
				} `json:"destinations"`
			} `json:"files"`
			DockerImages map[string]json.RawMessage `json:"dockerImages"`
		}
		if err := readJSON(filepath.Join(dir, a.Properties.File), &am); err != nil {
			return nil, err
		}
		if len(am.DockerImages) > 0 {
			return nil, errors.New("the stack has Docker image assets; devstack publishes file assets only")
		}
		ids := make([]string, 0, len(am.Files))
		for id := range am.Files {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			f := am.Files[id]
			fa := fileAsset{id: id, path: f.Source.Path, packaging: f.Source.Packaging}
			for _, d := range f.Destinations {
				fa.destinations = append(fa.destinations, assetLocation{bucket: d.BucketName, key: d.ObjectKey})
			}
			out.assets = append(out.assets, fa)
		}
	}
	return out, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// ---- assets -----------------------------------------------------------------

// publishAssets uploads every file asset (zipping directories) unless its
// content-addressed key is already there. It returns where each source path went.
func publishAssets(ctx context.Context, c *s3.Client, dir string, assets []fileAsset, account, region string) (map[string]assetLocation, error) {
	subst := strings.NewReplacer("${AWS::AccountId}", account, "${AWS::Region}", region, "${AWS::Partition}", "aws")
	ensured := map[string]bool{}
	published := map[string]assetLocation{}
	for _, a := range assets {
		for _, d := range a.destinations {
			loc := assetLocation{bucket: subst.Replace(d.bucket), key: subst.Replace(d.key)}
			if !ensured[loc.bucket] {
				if err := ensureBucket(ctx, c, loc.bucket, region); err != nil {
					return nil, err
				}
				ensured[loc.bucket] = true
			}
			published[a.path] = loc
			if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &loc.bucket, Key: &loc.key}); err == nil {
				continue
			}
			data, err := assetBytes(filepath.Join(dir, a.path), a.packaging)
			if err != nil {
				return nil, fmt.Errorf("asset %s: %w", a.id, err)
			}
			if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: &loc.bucket, Key: &loc.key, Body: bytes.NewReader(data)}); err != nil {
				return nil, fmt.Errorf("upload asset %s to s3://%s/%s: %w", a.id, loc.bucket, loc.key, err)
			}
		}
	}
	return published, nil
}

func ensureBucket(ctx context.Context, c *s3.Client, bucket, region string) error {
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &bucket}); err == nil {
		return nil
	}
	in := &s3.CreateBucketInput{Bucket: &bucket}
	if region != "us-east-1" {
		in.CreateBucketConfiguration = &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(region)}
	}
	_, err := c.CreateBucket(ctx, in)
	var owned *s3types.BucketAlreadyOwnedByYou
	if err != nil && !errors.As(err, &owned) {
		return fmt.Errorf("create asset bucket %s: %w", bucket, err)
	}
	return nil
}

func assetBytes(path, packaging string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	switch {
	case packaging == "zip" && fi.IsDir():
		return zipDir(path)
	case packaging == "file" && !fi.IsDir():
		return os.ReadFile(path)
	case packaging == "zip":
		// A pre-built .zip/.jar is uploaded as is.
		return os.ReadFile(path)
	}
	return nil, fmt.Errorf("unsupported packaging %q for %s", packaging, path)
}

// zipDir zips a directory with the files' modes preserved (bootstrap must stay
// executable), entries sorted and timestamps fixed.
func zipDir(root string) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != root {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	for _, p := range paths {
		fi, err := os.Stat(p) // follow symlinks, like the cdk CLI's archiver
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(root, p)
		h, err := zip.FileInfoHeader(fi)
		if err != nil {
			return nil, err
		}
		h.Name = filepath.ToSlash(rel)
		h.Modified = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
		if fi.IsDir() {
			h.Name += "/"
			if _, err := zw.CreateHeader(h); err != nil {
				return nil, err
			}
			continue
		}
		h.Method = zip.Deflate
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		_, err = io.Copy(w, f)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func accountID(ctx context.Context, cfg aws.Config) (string, error) {
	out, err := sts.NewFromConfig(cfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return "", fmt.Errorf("sts GetCallerIdentity: %w", err)
	}
	return aws.ToString(out.Account), nil
}

// ---- stack operations ---------------------------------------------------------

func describeStack(ctx context.Context, cfn *cloudformation.Client, name string) (*cfntypes.Stack, error) {
	out, err := cfn.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
	if err != nil {
		var ae smithy.APIError
		if errors.As(err, &ae) && strings.Contains(ae.ErrorMessage(), "does not exist") {
			return nil, nil
		}
		return nil, fmt.Errorf("describe stack %s: %w", name, err)
	}
	if len(out.Stacks) == 0 {
		return nil, nil
	}
	return &out.Stacks[0], nil
}

func isNoUpdates(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && strings.Contains(ae.ErrorMessage(), "No updates are to be performed")
}

// waitStack polls until the stack leaves *_IN_PROGRESS. It returns the final
// stack and, for anything but CREATE/UPDATE/IMPORT_COMPLETE, an error with the
// reasons of the resources that failed since `since`.
func waitStack(ctx context.Context, cfn *cloudformation.Client, name string, since time.Time) (*cfntypes.Stack, error) {
	delay := 250 * time.Millisecond
	for {
		st, err := describeStack(ctx, cfn, name)
		if err != nil {
			return nil, err
		}
		if st == nil {
			return nil, fmt.Errorf("stack %s disappeared", name)
		}
		status := string(st.StackStatus)
		if !strings.HasSuffix(status, "_IN_PROGRESS") {
			switch st.StackStatus {
			case cfntypes.StackStatusCreateComplete, cfntypes.StackStatusUpdateComplete, cfntypes.StackStatusImportComplete:
				return st, nil
			}
			reason := ""
			if r := aws.ToString(st.StackStatusReason); r != "" {
				reason = " (" + r + ")"
			}
			return st, fmt.Errorf("stack %s: %s%s%s", name, status, reason, failureReasons(ctx, cfn, name, since))
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("stack %s still %s: %w", name, status, ctx.Err())
		case <-time.After(delay):
		}
		if delay < 2*time.Second {
			delay += delay / 2
		}
	}
}

func failureReasons(ctx context.Context, cfn *cloudformation.Client, name string, since time.Time) string {
	var lines []string
	p := cloudformation.NewDescribeStackEventsPaginator(cfn, &cloudformation.DescribeStackEventsInput{StackName: aws.String(name)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			lines = append(lines, "(stack events unavailable: "+err.Error()+")")
			break
		}
		for _, ev := range page.StackEvents {
			if ev.Timestamp != nil && ev.Timestamp.Before(since) {
				continue
			}
			if strings.HasSuffix(string(ev.ResourceStatus), "_FAILED") {
				lines = append(lines, fmt.Sprintf("  %s %s (%s): %s", ev.ResourceStatus, aws.ToString(ev.LogicalResourceId),
					aws.ToString(ev.ResourceType), aws.ToString(ev.ResourceStatusReason)))
			}
		}
	}
	if len(lines) == 0 {
		return ""
	}
	// Events come newest first; the root cause is usually the oldest.
	for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
		lines[i], lines[j] = lines[j], lines[i]
	}
	return "\n" + strings.Join(lines, "\n")
}

func deleteStack(ctx context.Context, cfn *cloudformation.Client, name string) error {
	st, err := describeStack(ctx, cfn, name)
	if err != nil || st == nil || st.StackStatus == cfntypes.StackStatusDeleteComplete {
		return err
	}
	since := time.Now().Add(-time.Second)
	if _, err := cfn.DeleteStack(ctx, &cloudformation.DeleteStackInput{StackName: st.StackId}); err != nil {
		return fmt.Errorf("delete stack %s: %w", name, err)
	}
	for {
		out, err := cfn.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: st.StackId})
		if err != nil {
			var ae smithy.APIError
			if errors.As(err, &ae) && strings.Contains(ae.ErrorMessage(), "does not exist") {
				return nil
			}
			return err
		}
		if len(out.Stacks) == 0 || out.Stacks[0].StackStatus == cfntypes.StackStatusDeleteComplete {
			return nil
		}
		if out.Stacks[0].StackStatus == cfntypes.StackStatusDeleteFailed {
			return fmt.Errorf("delete stack %s: DELETE_FAILED%s", name, failureReasons(ctx, cfn, name, since))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// fixSecretArns works around an emulator deviation: MiniStack (1.5.33) answers
// Ref of an AWS::SecretsManager::Secret with the secret's name, where
// CloudFormation answers its ARN. Outputs named *SecretArn that are not ARNs
// are resolved to the secret's real ARN. (Function environments still carry
// the name there; GetSecretValue accepts either.)
func fixSecretArns(ctx context.Context, cfg aws.Config, o Outputs) (Outputs, error) {
	var sm *secretsmanager.Client
	for k, v := range o {
		if !strings.HasSuffix(k, "SecretArn") || v == "" || strings.HasPrefix(v, "arn:") {
			continue
		}
		if sm == nil {
			sm = secretsmanager.NewFromConfig(cfg)
		}
		d, err := sm.DescribeSecret(ctx, &secretsmanager.DescribeSecretInput{SecretId: aws.String(v)})
		if err != nil {
			return nil, fmt.Errorf("output %s: describe secret %s: %w", k, v, err)
		}
		o[k] = aws.ToString(d.ARN)
	}
	return o, nil
}

func outputsOf(st *cfntypes.Stack) Outputs {
	o := Outputs{}
	for _, out := range st.Outputs {
		o[aws.ToString(out.OutputKey)] = aws.ToString(out.OutputValue)
	}
	return o
}
