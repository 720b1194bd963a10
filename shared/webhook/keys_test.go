package webhook

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/criticizer/criticizer/shared/secrets"
)

type fakeVersions struct {
	values   map[string]string // stage → value
	errs     map[string]error  // stage → error
	forgot   []string
	requests []string
}

func (f *fakeVersions) Get(_ context.Context, id, stage string) (string, bool, error) {
	f.requests = append(f.requests, stage)
	if err := f.errs[stage]; err != nil {
		return "", false, err
	}
	v, ok := f.values[stage]
	return v, ok, nil
}

func (f *fakeVersions) Forget(id string) { f.forgot = append(f.forgot, id) }

func TestSecretKeys(t *testing.T) {
	boom := errors.New("throttled")
	tests := []struct {
		name    string
		values  map[string]string
		errs    map[string]error
		fresh   bool
		want    []string
		wantErr error
	}{
		{"never rotated: current only", map[string]string{secrets.Current: "k2"}, nil, false, []string{"k2"}, nil},
		{"rotating: current then previous", map[string]string{secrets.Current: "k2", secrets.Previous: "k1"}, nil, false, []string{"k2", "k1"}, nil},
		{"previous unreadable: current still verifies", map[string]string{secrets.Current: "k2"}, map[string]error{secrets.Previous: boom}, false, []string{"k2"}, nil},
		{"current unreadable: error", nil, map[string]error{secrets.Current: boom}, false, nil, boom},
		{"fresh read forgets the cache", map[string]string{secrets.Current: "k3"}, nil, true, []string{"k3"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeVersions{values: tt.values, errs: tt.errs}
			keys, err := SecretKeys(f, "webhook/hmac")(context.Background(), tt.fresh)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			var got []string
			for _, k := range keys {
				got = append(got, string(k))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("keys = %q, want %q", got, tt.want)
			}
			if forgot := len(f.forgot) > 0; forgot != tt.fresh {
				t.Errorf("forgot cache = %v, want %v", forgot, tt.fresh)
			}
		})
	}
}
