// Command devstack runs the Criticizer stack on the local AWS emulator.
//
//	devstack demo    [-port 0] [-keep] [-llm local]                                  emulator + stack + stand-ins, send the sample webhook, print the e-mail
//	devstack run     [-port 4566]                                                    the same environment in the foreground until Ctrl-C (make up)
//	devstack invoke  -fn webhook|fetch|llm|notify|sweeper -event FILE                invoke a function of the environment `run` started
//	devstack deploy  [-endpoint URL] [-env local] [-overrides JSON] [-asset-root DIR] synth + deploy to a running emulator
//	devstack down    [-port 4566]                                                    stop the emulator started by localstack/start.sh
//
// demo and run start the whole local environment (devstack.StartLocal).
// demo follows the sample webhook's job (events/webhook-post.json) and a
// Swarm review's test run to their end, printing the e-mails and comments;
// it exits 0 only if both succeeded. run writes .run/devstack.json
// (endpoint, outputs, webhook key; mode 0600) for invoke, which signs
// sample events whose signature headers hold SIGNED-AT-INVOKE. deploy and
// down work with an emulator localstack/start.sh started; deploy prints the
// stack outputs (JSON or KEY=VALUE) with LocalApiUrl, the API stage's
// emulator URL.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"

	"github.com/criticizer/criticizer/internal/devstack"
)

func main() {
	commands := map[string]func(context.Context, []string) error{"demo": demo, "run": run, "invoke": invoke, "deploy": deploy, "down": down}
	if len(os.Args) < 2 || commands[os.Args[1]] == nil {
		usage()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := commands[os.Args[1]](ctx, os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "devstack:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: devstack demo|run|invoke|deploy|down [flags]  (devstack <cmd> -h for flags)")
	os.Exit(2)
}

func deploy(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("deploy", flag.ExitOnError)
	endpoint := fs.String("endpoint", cmp.Or(os.Getenv("AWS_ENDPOINT_URL"), "http://127.0.0.1:4566"), "emulator endpoint")
	env := fs.String("env", "local", "environment (cdk.json context environments.<env>)")
	overrides := fs.String("overrides", os.Getenv("CRITICIZER_OVERRIDES"), `JSON object laid over the environment, e.g. {"llmEndpoint":"http://127.0.0.1:5001"} (default $CRITICIZER_OVERRIDES)`)
	assetRoot := fs.String("asset-root", "", "directory with <function>/bootstrap (default build/lambda)")
	format := fs.String("format", "json", "output format: json or env")
	_ = fs.Parse(args)
	so := devstack.SynthOptions{Env: *env, AssetRoot: *assetRoot}
	if *overrides != "" {
		if err := json.Unmarshal([]byte(*overrides), &so.Overrides); err != nil {
			return fmt.Errorf("-overrides: %w", err)
		}
	}
	run, err := devstack.RunDir()
	if err != nil {
		return err
	}
	so.OutDir = filepath.Join(run, "cdk.out-"+*env)
	if !devstack.Healthy(*endpoint) {
		return fmt.Errorf("no emulator answering on %s (start one with localstack/start.sh or devstack up)", *endpoint)
	}
	dir, err := devstack.Synth(ctx, so)
	if err != nil {
		return err
	}
	out, err := devstack.Deploy(ctx, devstack.EmulatorConfig(*endpoint), dir, devstack.StackName(so.Env), os.Stderr)
	if err != nil {
		return err
	}
	return printOutputs(out, *endpoint, *format)
}

func down(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("down", flag.ExitOnError)
	port := fs.Int("port", 4566, "emulator port")
	_ = fs.Parse(args)
	root, err := devstack.RepoRoot()
	if err != nil {
		return err
	}
	cmd := exec.Command("bash", filepath.Join(root, "localstack", "stop.sh"))
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(*port))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

func printOutputs(o devstack.Outputs, endpoint, format string) error {
	m := maps.Clone(o)
	m["LocalApiUrl"] = o.LocalAPIURL(endpoint)
	switch format {
	case "env":
		for _, k := range slices.Sorted(maps.Keys(m)) {
			fmt.Printf("%s=%s\n", k, m[k])
		}
		return nil
	case "json":
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(m)
	}
	return fmt.Errorf("unknown format %q", format)
}
