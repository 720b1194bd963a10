package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/criticizer/criticizer/internal/devstack"
)

// runState is what `run` leaves in .run/devstack.json for `invoke`. It holds
// the webhook key: the file is private (0600) and removed when run stops.
type runState struct {
	Endpoint      string           `json:"endpoint"`
	Stack         string           `json:"stack"`
	APIURL        string           `json:"api_url"`
	Outputs       devstack.Outputs `json:"outputs"`
	WebhookKeyHex string           `json:"webhook_key_hex"`
	PID           int              `json:"pid"`
	EmulatorLog   string           `json:"emulator_log"`
}

func statePath() (string, error) {
	dir, err := devstack.RunDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "devstack.json"), nil
}

func readState() (*runState, error) {
	path, err := statePath()
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errors.New("no local environment running: start one with `make up`")
	}
	if err != nil {
		return nil, err
	}
	var s runState
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !devstack.Healthy(s.Endpoint) {
		return nil, fmt.Errorf("no local environment running: nothing answers on %s (%s is stale: remove it, then `make up`)", s.Endpoint, path)
	}
	return &s, nil
}

// writeState creates the state file with mode 0600, replacing any stale one.
func writeState(path string, s runState) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	return errors.Join(err, f.Close())
}

// run starts the local environment and keeps it up until Ctrl-C/SIGTERM.
func run(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("run", flag.ExitOnError)
	port := flags.Int("port", 4566, "emulator port on 127.0.0.1 (0 picks a free one)")
	_ = flags.Parse(args)

	path, err := statePath()
	if err != nil {
		return err
	}
	if s, err := readState(); err == nil {
		return fmt.Errorf("a local environment already runs on %s (pid %d, %s)", s.Endpoint, s.PID, path)
	}
	l, err := startLocal(ctx, *port)
	if err != nil {
		return err
	}
	defer stopLocal(l)
	defer os.Remove(path)
	if err := writeState(path, runState{
		Endpoint: l.Emulator.Endpoint, Stack: l.StackName, APIURL: l.APIURL, Outputs: l.Outputs,
		WebhookKeyHex: hex.EncodeToString(l.WebhookKey), PID: os.Getpid(), EmulatorLog: l.Emulator.LogFile,
	}); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	printEnv(l.Emulator.Endpoint, l.APIURL, l.StackName)
	fmt.Printf("# e.g. make invoke FN=sweeper EVENT=events/sweeper.json\n\n")
	progress("running until Ctrl-C (state in %s, emulator log %s)", path, l.Emulator.LogFile)
	<-ctx.Done()
	return nil
}
