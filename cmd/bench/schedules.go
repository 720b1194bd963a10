package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// disableSchedules turns off the stack's EventBridge rules on the emulator,
// so no scheduled sweeper run lands in a measured one's counts. It speaks
// EventBridge's JSON protocol (ListRules, DisableRule) signed like any SDK
// call: the repository has no EventBridge client to spare a dependency on.
func disableSchedules(ctx context.Context, cfg aws.Config, endpoint, stack string) error {
	var rules struct{ Rules []struct{ Name string } }
	if err := eventsCall(ctx, cfg, endpoint, "ListRules", map[string]any{"NamePrefix": stack}, &rules); err != nil {
		return err
	}
	if len(rules.Rules) == 0 {
		return fmt.Errorf("no EventBridge rule named %s…", stack)
	}
	for _, r := range rules.Rules {
		if err := eventsCall(ctx, cfg, endpoint, "DisableRule", map[string]any{"Name": r.Name}, nil); err != nil {
			return err
		}
	}
	return nil
}

func eventsCall(ctx context.Context, cfg aws.Config, endpoint, action string, in, out any) error {
	body, _ := json.Marshal(in) // plain maps: cannot fail
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(endpoint, "/")+"/", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "AWSEvents."+action)
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "events", cfg.Region, time.Now()); err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("events %s: HTTP %d: %s", action, resp.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}
