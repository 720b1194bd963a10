package secrets

import (
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/failure"
)

func TestUnmarshal(t *testing.T) {
	type creds struct {
		Username string `json:"username"`
		Password string `json:"password"`
	}
	tests := []struct {
		name, value string
		required    []string
		want        creds
		wantErr     string
	}{
		{"both fields", `{"username":"u","password":"p"}`, []string{"password"}, creds{"u", "p"}, ""},
		{"field names are case-insensitive like encoding/json", `{"Username":"u","password":"p"}`, []string{"password"}, creds{"u", "p"}, ""},
		{"required field in another case", `{"username":"u","Password":"p"}`, []string{"password"}, creds{"u", "p"}, ""},
		{"required missing", `{"username":"u"}`, []string{"password"}, creds{}, `non-empty string "password"`},
		{"required empty", `{"password":""}`, []string{"password"}, creds{}, `"password"`},
		{"required not a string", `{"password":5}`, []string{"password"}, creds{}, `"password"`},
		{"not JSON", `hunter2`, []string{"password"}, creds{}, "want a JSON object with password"},
		{"wrong type of optional field", `{"username":5,"password":"p"}`, []string{"password"}, creds{}, "wrong type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got creds
			err := Unmarshal("smtp/creds", tt.value, &got, tt.required...)
			if tt.wantErr == "" {
				if err != nil || got != tt.want {
					t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
			}
			if failure.Classify(err) != failure.InternalBug {
				t.Errorf("class = %s, want INTERNAL_BUG (a bad secret is deploy config)", failure.Classify(err))
			}
			if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), `"p"`) {
				t.Errorf("error leaks the secret value: %v", err)
			}
		})
	}
}
