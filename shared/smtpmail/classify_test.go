package smtpmail

import (
	"testing"

	"github.com/criticizer/criticizer/shared/failure"
)

func TestClassifyReply(t *testing.T) {
	tests := []struct {
		code      int
		enhanced  string
		want      failure.Class
		retryable bool
	}{
		{421, "4.4.2", failure.Upstream5xx, true},
		{450, "4.2.1", failure.Upstream5xx, true},
		{451, "4.3.0", failure.Upstream5xx, true},
		{452, "4.5.3", failure.Upstream5xx, true},
		{454, "4.7.0", failure.Upstream5xx, true},
		{530, "5.7.0", failure.AuthDenied, false},
		{535, "5.7.8", failure.AuthDenied, false},
		{534, "", failure.AuthDenied, false},
		{538, "", failure.AuthDenied, false},
		{523, "5.7.10", failure.AuthDenied, false},
		{550, "5.1.1", failure.NotFound, false},
		{550, "", failure.NotFound, false},
		{551, "5.1.6", failure.NotFound, false},
		{553, "5.1.3", failure.NotFound, false},
		{550, "5.7.1", failure.PolicyRejected, false},
		{552, "5.3.4", failure.PolicyRejected, false},
		{554, "5.7.1", failure.PolicyRejected, false},
		{554, "", failure.PolicyRejected, false},
		{500, "5.5.2", failure.SchemaInvalid, false},
		{501, "5.5.4", failure.SchemaInvalid, false},
		{503, "5.5.1", failure.SchemaInvalid, false},
		{555, "5.5.4", failure.SchemaInvalid, false},
		{557, "", failure.PolicyRejected, false},
		{250, "", failure.InternalBug, false},
		{0, "", failure.InternalBug, false},
	}
	for _, tt := range tests {
		got := classifyReply(tt.code, tt.enhanced)
		if got != tt.want || got.Retryable() != tt.retryable {
			t.Errorf("classifyReply(%d, %q) = %s (retryable %v), want %s (retryable %v)",
				tt.code, tt.enhanced, got, got.Retryable(), tt.want, tt.retryable)
		}
	}
}

func TestEnhancedCode(t *testing.T) {
	tests := []struct{ msg, want string }{
		{"5.7.8 Authentication failed", "5.7.8"},
		{" 4.7.0 Try later", "4.7.0"},
		{"Authentication failed", ""},
		{"5.7.8x nope", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := enhancedCode(tt.msg); got != tt.want {
			t.Errorf("enhancedCode(%q) = %q, want %q", tt.msg, got, tt.want)
		}
	}
}
