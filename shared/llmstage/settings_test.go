package llmstage

import (
	"testing"

	"github.com/criticizer/criticizer/shared/config/configtest"
	"github.com/criticizer/criticizer/shared/llm"
)

func TestSettingsFromEnv(t *testing.T) {
	env := func(extra ...string) map[string]string {
		m := map[string]string{"LLM_MODEL": "gpt-4o-mini", "LLM_ENDPOINT": "https://api.openai.com", "LLM_SECRET_ID": "arn:llm"}
		for i := 0; i < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	tests := []struct {
		name    string
		env     map[string]string
		check   func(Settings) bool
		wantErr string
	}{
		{name: "defaults", env: env(), check: func(s Settings) bool {
			return s.Parallelism == DefaultParallelism && s.Budget.ContextTokens == 0 && s.Budget.BytesPerToken == 0 && s.Budget.OutputTokens == s.LLM.Config.MaxTokens
		}},
		{name: "limits set", env: env("LLM_CONTEXT_TOKENS", "200000", "LLM_BYTES_PER_TOKEN", "3.5", "LLM_PARALLELISM", "8", "REVIEW_MAX_FILES", "100",
			"REVIEW_MAX_BYTES", "1048576", "REVIEW_MAX_FILE_BYTES", "65536", "REVIEW_MAX_CHUNK_FILES", "20", "LLM_MAX_OUTPUT_TOKENS", "8192"),
			check: func(s Settings) bool {
				b := s.Budget
				return b.ContextTokens == 200000 && b.BytesPerToken == 3.5 && s.Parallelism == 8 && b.MaxFiles == 100 && b.MaxBytes == 1<<20 &&
					b.MaxFileBytes == 65536 && b.MaxChunkFiles == 20 && b.OutputTokens == 8192
			}},
		{name: "bytes per token out of range", env: env("LLM_BYTES_PER_TOKEN", "0.5"), wantErr: "LLM_BYTES_PER_TOKEN"},
		{name: "bytes per token not a number", env: env("LLM_BYTES_PER_TOKEN", "few"), wantErr: "LLM_BYTES_PER_TOKEN"},
		{name: "parallelism zero", env: env("LLM_PARALLELISM", "0"), wantErr: "LLM_PARALLELISM"},
		{name: "negative file limit", env: env("REVIEW_MAX_FILES", "-1"), wantErr: "REVIEW_MAX_FILES"},
		{name: "unknown prompt candidate", env: env("PROMPT_CANDIDATE_VERSION", "9.9.9", "PROMPT_CANDIDATE_PERCENT", "10"), wantErr: "9.9.9"},
		{name: "model canary", env: env("LLM_MODEL_CANDIDATE", "gpt-4.1-mini", "LLM_MODEL_CANDIDATE_PERCENT", "25"), check: func(s Settings) bool {
			return s.ModelRollout.Candidate == "gpt-4.1-mini" && s.ModelRollout.Percent == 25
		}},
		{name: "model canary off by default", env: env(), check: func(s Settings) bool { return !s.ModelRollout.Active() }},
		{name: "candidate limits default to the stable model's", env: env("LLM_REQUESTS_PER_MINUTE", "500", "LLM_TOKENS_PER_MINUTE", "200000",
			"LLM_MODEL_CANDIDATE", "gpt-4.1-mini", "LLM_MODEL_CANDIDATE_PERCENT", "25"), check: func(s Settings) bool {
			return s.Candidate.RequestsPerMinute == 500 && s.Candidate.TokensPerMinute == 200000 && s.Candidate.Prices == llm.Prices{}
		}},
		{name: "candidate prices and limits of its own", env: env("LLM_REQUESTS_PER_MINUTE", "500", "LLM_TOKENS_PER_MINUTE", "200000", "LLM_PRICES_PER_MTOK", "input=3,output=15",
			"LLM_MODEL_CANDIDATE", "gpt-4.1-mini", "LLM_MODEL_CANDIDATE_PERCENT", "25", "LLM_MODEL_CANDIDATE_PRICES_PER_MTOK", "input=0.4,output=1.6",
			"LLM_MODEL_CANDIDATE_REQUESTS_PER_MINUTE", "30000", "LLM_MODEL_CANDIDATE_TOKENS_PER_MINUTE", "150000000"), check: func(s Settings) bool {
			return s.Candidate == ModelTerms{Prices: llm.Prices{Input: 0.4, CacheWrite: 0.4, Output: 1.6}, RequestsPerMinute: 30000, TokensPerMinute: 150000000} &&
				s.Terms == ModelTerms{Prices: llm.Prices{Input: 3, CacheWrite: 3, Output: 15}, RequestsPerMinute: 500, TokensPerMinute: 200000}
		}},
		{name: "bad candidate prices", env: env("LLM_MODEL_CANDIDATE_PRICES_PER_MTOK", "input=cheap"), wantErr: "LLM_MODEL_CANDIDATE_PRICES_PER_MTOK"},
		{name: "candidate token limit too small for one chunk", env: env("LLM_MODEL_CANDIDATE_TOKENS_PER_MINUTE", "500"), wantErr: "LLM_MODEL_CANDIDATE_TOKENS_PER_MINUTE"},
		{name: "prompt candidate percent out of range", env: env("PROMPT_CANDIDATE_VERSION", "1.1.0", "PROMPT_CANDIDATE_PERCENT", "101"), wantErr: "PROMPT_CANDIDATE_PERCENT"},
		{name: "model candidate percent out of range", env: env("LLM_MODEL_CANDIDATE", "gpt-4.1-mini", "LLM_MODEL_CANDIDATE_PERCENT", "101"), wantErr: "LLM_MODEL_CANDIDATE_PERCENT"},
		{name: "model candidate is the stable model", env: env("LLM_MODEL_CANDIDATE", "gpt-4o-mini", "LLM_MODEL_CANDIDATE_PERCENT", "10"), wantErr: "stable model"},
		{name: "provider problem surfaces", env: map[string]string{"LLM_MODEL": "m"}, wantErr: "LLM_ENDPOINT is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ok := configtest.Load(t, tt.env, SettingsFromEnv, tt.wantErr)
			if !ok {
				return
			}
			if !tt.check(s) {
				t.Fatalf("got %+v", s)
			}
		})
	}
}
