package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/criticizer/criticizer/shared/doctor"
)

// Invoker is the part of the Lambda client the doctor command calls.
type Invoker interface {
	Invoke(ctx context.Context, in *lambda.InvokeInput, opts ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

// doctorCmd runs the pre-flight: it invokes the stack's doctor function,
// which checks Perforce, Swarm, the model and e-mail from the functions'
// own network (shared/doctor), prints a verdict per check with its fix,
// and fails when any check failed. --local runs it on the emulator
// (AWS_ENDPOINT_URL, `make up`), against the stand-ins.
func doctorCmd(ctx context.Context, out io.Writer, stack string, stackGiven, asJSON bool, args []string) error {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	local := fs.Bool("local", false, "the local environment on the emulator (AWS_ENDPOINT_URL), against the stand-ins")
	change := fs.Int64("change", 0, "a recent submitted changelist under the allow-list, fetched whole as a job would")
	review := fs.Int64("review", 0, "a Swarm review the service user may read")
	fs.BoolVar(&asJSON, "json", asJSON, "print the report as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var opts []func(*awsconfig.LoadOptions) error
	if *local {
		var err error
		if opts, err = localAWS(); err != nil {
			return err
		}
		if !stackGiven {
			stack = "Criticizer-local"
		}
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return fmt.Errorf("load AWS config: %w", err)
	}
	outputs, err := stackOutputs(ctx, cloudformation.NewFromConfig(cfg), stack)
	if err != nil {
		return err
	}
	fn := outputs["DoctorFunctionName"]
	if fn == "" {
		return fmt.Errorf("stack %s has no doctor function (output DoctorFunctionName): deploy this release first", stack)
	}
	report, err := invokeDoctor(ctx, lambda.NewFromConfig(cfg), fn, doctor.Request{Change: *change, Review: *review})
	if err != nil {
		return err
	}
	return printReport(out, report, asJSON, stack)
}

// localAWS points the SDK at the emulator: AWS_ENDPOINT_URL must name a
// loopback address (never AWS), and any credentials do.
func localAWS() ([]func(*awsconfig.LoadOptions) error, error) {
	endpoint := os.Getenv("AWS_ENDPOINT_URL")
	u, err := url.Parse(endpoint)
	if endpoint == "" || err != nil {
		return nil, errors.New("doctor --local runs on the emulator: set AWS_ENDPOINT_URL to it (`make up` prints the lines to set)")
	}
	if ip := net.ParseIP(u.Hostname()); u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("doctor --local: AWS_ENDPOINT_URL=%s is not the local emulator (a loopback address); use --stack for a deployed environment", endpoint)
	}
	var opts []func(*awsconfig.LoadOptions) error
	if os.Getenv("AWS_ACCESS_KEY_ID") == "" {
		opts = append(opts, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("test", "test", "")))
	}
	if os.Getenv("AWS_REGION") == "" && os.Getenv("AWS_DEFAULT_REGION") == "" {
		opts = append(opts, awsconfig.WithRegion("us-east-1"))
	}
	return opts, nil
}

func invokeDoctor(ctx context.Context, api Invoker, fn string, req doctor.Request) (doctor.Report, error) {
	payload, _ := json.Marshal(req)
	res, err := api.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String(fn), Payload: payload})
	if err != nil {
		return doctor.Report{}, fmt.Errorf("invoke the doctor function %s: %w", fn, err)
	}
	if res.FunctionError != nil {
		// A cold start refused: the function's settings are broken; its
		// answer says which.
		return doctor.Report{}, fmt.Errorf("the doctor function %s failed (%s): %s", fn, aws.ToString(res.FunctionError), truncate(string(res.Payload), 2000))
	}
	var report doctor.Report
	if err := json.Unmarshal(res.Payload, &report); err != nil || len(report.Verdicts) == 0 {
		return doctor.Report{}, fmt.Errorf("the doctor function %s answered no report: %s", fn, truncate(string(res.Payload), 500))
	}
	return report, nil
}

func printReport(out io.Writer, r doctor.Report, asJSON bool, stack string) error {
	counts := map[doctor.Status]int{}
	for _, v := range r.Verdicts {
		counts[v.Status]++
	}
	if asJSON {
		if err := json.NewEncoder(out).Encode(r); err != nil {
			return err
		}
	} else {
		for _, v := range r.Verdicts {
			fmt.Fprintf(out, "%-4s  %s: %s\n", v.Status, v.Check, v.Detail)
			if v.Fix != "" {
				fmt.Fprintf(out, "      fix: %s\n", v.Fix)
			}
		}
		fmt.Fprintf(out, "\n%s: %d ok, %d warn, %d fail, %d skipped\n", stack, counts[doctor.OK], counts[doctor.Warn], counts[doctor.Fail], counts[doctor.Skip])
	}
	if r.Failed() {
		return fmt.Errorf("doctor: %d check(s) failed on %s; each names its fix", counts[doctor.Fail], stack)
	}
	return nil
}
