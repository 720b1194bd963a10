package main

import (
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/criticizer/criticizer/internal/devstack"
)

// invoke runs one function of the environment `run` started, synchronously,
// with a sample event.
func invoke(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("invoke", flag.ExitOnError)
	fn := flags.String("fn", "", "function: "+strings.Join(devstack.FunctionNames, "|"))
	file := flags.String("event", "", "event file, e.g. events/sweeper.json")
	timeout := flags.Duration("timeout", 2*time.Minute, "give up after this long")
	_ = flags.Parse(args)
	if !slices.Contains(devstack.FunctionNames, *fn) || *file == "" {
		flags.Usage()
		return fmt.Errorf("-fn must be one of %s and -event a file", strings.Join(devstack.FunctionNames, ", "))
	}

	s, err := readState()
	if err != nil {
		return err
	}
	output := strings.ToUpper((*fn)[:1]) + (*fn)[1:] + "FunctionName"
	name := s.Outputs[output]
	if name == "" {
		return fmt.Errorf("stack %s has no output %s", s.Stack, output)
	}
	payload, err := os.ReadFile(*file)
	if err != nil {
		return err
	}
	if *fn == "webhook" {
		req, ok, err := readProxyRequest(*file)
		if err != nil {
			return err
		}
		if ok && req.hasPlaceholder() {
			key, err := hex.DecodeString(s.WebhookKeyHex)
			if err != nil {
				return fmt.Errorf("webhook key in the state file: %w", err)
			}
			if payload, err = req.signed(key); err != nil {
				return fmt.Errorf("%s: %w", *file, err)
			}
			progress("signed %s %s with the stack's webhook key", req.HTTPMethod, req.signedPath())
		}
	}

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	start := time.Now()
	out, err := lambda.NewFromConfig(devstack.EmulatorConfig(s.Endpoint)).Invoke(ctx, &lambda.InvokeInput{
		FunctionName: aws.String(name), Payload: payload,
	})
	if err != nil {
		return fmt.Errorf("invoke %s: %w", name, err)
	}
	progress("%s answered in %s", name, time.Since(start).Round(time.Millisecond))
	printJSON(out.Payload)
	if out.FunctionError != nil {
		return errors.New("function error: " + aws.ToString(out.FunctionError))
	}
	return nil
}
