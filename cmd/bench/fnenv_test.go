package main

import (
	"strings"
	"testing"

	"github.com/criticizer/criticizer/internal/fnsettings"
)

// TestFunctionEnvIsAccepted: the environment each cold start is measured with
// passes that function's own settings loaders, so `make bench` measures a
// start, not a refusal.
func TestFunctionEnvIsAccepted(t *testing.T) {
	for name := range fnsettings.Functions {
		env := map[string]string{}
		for _, kv := range append(append([]string{}, commonEnv...), FunctionEnv[name]...) {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		if _, err := fnsettings.Read(name, env); err != nil {
			t.Errorf("%s: FunctionEnv is refused: %v", name, err)
		}
	}
}
