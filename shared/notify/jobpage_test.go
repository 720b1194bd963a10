package notify

import (
	"strings"
	"testing"
)

func TestJobPageLink(t *testing.T) {
	const page = "https://abc.execute-api.eu-west-1.amazonaws.com/prod/view/0f8fad5b-d9cb-469f-a165-70867728950e/AbC_-x"
	tests := []struct {
		name, url string
		want      bool
	}{
		{"page on", page, true},
		{"page off", "", false},
		{"not an http(s) URL", "javascript:alert(1)//", false},
		{"credentials in the URL", "https://u:p@abc.example.com/view/x/y", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testContent()
			c.JobPageURL = tt.url
			raw, _ := renderMail(t, testKey, c)
			p := parse(t, raw)
			if got := strings.Contains(p.text, "View this review: "+page); got != tt.want {
				t.Errorf("text part has the link: %v, want %v\n%s", got, tt.want, p.text)
			}
			if got := strings.Contains(p.html, `<a href="`+page+`">View this review</a>`); got != tt.want {
				t.Errorf("HTML part has the link: %v, want %v\n%s", got, tt.want, p.html)
			}
			if !tt.want && (strings.Contains(p.text, "View this review") || strings.Contains(p.html, "View this review")) {
				t.Error("no page, no link")
			}
		})
	}
}
