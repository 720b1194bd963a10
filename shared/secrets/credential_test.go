package secrets

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
)

func TestParseCallerCredential(t *testing.T) {
	created := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		value     string
		wantKey   string
		wantUntil time.Time
		wantErr   bool
	}{
		{"plain-generated-value", "plain-generated-value", created.Add(DefaultOverlap), false},
		{`{"key":"k2","previous_valid_until":"2026-11-25T12:00:00Z"}`, "k2", time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC), false},
		{`{"key":"k2"}`, "k2", created.Add(DefaultOverlap), false},
		{`{"key":""}`, "", time.Time{}, true},
		{`{"key":"k","previous_valid_until":"tomorrow"}`, "", time.Time{}, true},
		{`{"key":"k","extra":1}`, "", time.Time{}, true},
		{"", "", time.Time{}, true},
	}
	for _, tt := range tests {
		c, err := ParseCallerCredential(tt.value)
		if (err != nil) != tt.wantErr {
			t.Errorf("%q: err %v", tt.value, err)
			continue
		}
		if err != nil {
			if strings.Contains(err.Error(), "k2") || (tt.value != "" && strings.Contains(err.Error(), tt.value)) {
				t.Errorf("the error quotes the secret: %v", err)
			}
			continue
		}
		if c.Key != tt.wantKey || !c.PreviousDeadline(Version{Created: created}).Equal(tt.wantUntil) {
			t.Errorf("%q: key %q until %v", tt.value, c.Key, c.PreviousDeadline(Version{Created: created}))
		}
	}
	if !(CallerCredential{Key: "k"}).PreviousDeadline(Version{}).IsZero() {
		t.Error("an unknown creation time must admit no previous version")
	}
}

// adminSM keeps the stage labels of a secret's versions as Secrets Manager does.
type adminSM struct {
	versions map[string]string   // id → value
	stages   map[string][]string // id → labels
	n        int
}

func (f *adminSM) find(stage string) string {
	for id, ls := range f.stages {
		for _, l := range ls {
			if l == stage {
				return id
			}
		}
	}
	return ""
}

func (f *adminSM) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	id := f.find(aws.ToString(in.VersionStage))
	if id == "" {
		return nil, &smtypes.ResourceNotFoundException{Message: aws.String("no such stage")}
	}
	return &secretsmanager.GetSecretValueOutput{SecretString: aws.String(f.versions[id]), VersionId: aws.String(id)}, nil
}

func (f *adminSM) PutSecretValue(_ context.Context, in *secretsmanager.PutSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.PutSecretValueOutput, error) {
	f.n++
	id := "v" + string(rune('0'+f.n))
	for old, ls := range f.stages { // AWSCURRENT moves, the old current becomes AWSPREVIOUS
		var keep []string
		for _, l := range ls {
			switch l {
			case Current:
				keep = append(keep, Previous)
			case Previous:
			default:
				keep = append(keep, l)
			}
		}
		f.stages[old] = keep
	}
	f.versions[id], f.stages[id] = aws.ToString(in.SecretString), []string{Current}
	return &secretsmanager.PutSecretValueOutput{VersionId: aws.String(id)}, nil
}

func (f *adminSM) UpdateSecretVersionStage(_ context.Context, in *secretsmanager.UpdateSecretVersionStageInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.UpdateSecretVersionStageOutput, error) {
	id, stage := aws.ToString(in.RemoveFromVersionId), aws.ToString(in.VersionStage)
	var keep []string
	for _, l := range f.stages[id] {
		if l != stage {
			keep = append(keep, l)
		}
	}
	f.stages[id] = keep
	return &secretsmanager.UpdateSecretVersionStageOutput{}, nil
}

func TestRotateThenRevoke(t *testing.T) {
	sm := &adminSM{versions: map[string]string{"v0": "generated"}, stages: map[string][]string{"v0": {Current}}}
	ctx := context.Background()
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	key, err := NewCallerKey()
	if err != nil || len(key) < 40 {
		t.Fatalf("NewCallerKey = %d chars, %v", len(key), err)
	}
	c, err := RotateCallerCredential(ctx, sm, "webhook", key, 2*time.Hour, now)
	if err != nil || !c.PreviousValidUntil.Equal(now.Add(2*time.Hour)) {
		t.Fatalf("rotate: %+v %v", c, err)
	}
	cur, _ := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{VersionStage: aws.String(Current)})
	if parsed, err := ParseCallerCredential(aws.ToString(cur.SecretString)); err != nil || parsed.Key != key || !parsed.PreviousValidUntil.Equal(c.PreviousValidUntil) {
		t.Fatalf("stored %q: %+v %v", aws.ToString(cur.SecretString), parsed, err)
	}
	if sm.find(Previous) != "v0" {
		t.Fatalf("previous = %q, want the generated version", sm.find(Previous))
	}
	vid, err := RevokePrevious(ctx, sm, "webhook")
	if err != nil || vid != "v0" || sm.find(Previous) != "" {
		t.Fatalf("revoke: %q %v, previous now %q", vid, err, sm.find(Previous))
	}
	if vid, err := RevokePrevious(ctx, sm, "webhook"); err != nil || vid != "" {
		t.Fatalf("second revoke: %q %v, want nothing to do", vid, err)
	}
	if _, err := RotateCallerCredential(ctx, sm, "webhook", key, -time.Second, now); err == nil {
		t.Error("a negative overlap was accepted")
	}
}
