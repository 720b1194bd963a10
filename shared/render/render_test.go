package render

import "testing"

// The code excerpt is the change's own lines, and an injection can sit in
// them: a URL there is written inert in both parts as the model's text is,
// so no mail client links it (issue 30, "model text is data").
func TestCodeExcerptURLsAreInert(t *testing.T) {
	got := snippet(map[int]string{1: "x := 1", 2: `// see https://evil.example/login and www.evil.example`, 3: "y := 2"}, 2, 2)
	if len(got) != 3 || !got[1].Hit {
		t.Fatalf("snippet = %+v, want lines 1-3 with line 2 hit", got)
	}
	if want := "// see https[:]//evil[.]example/login and www[.]evil[.]example"; got[1].Text != want {
		t.Errorf("excerpt line %q, want %q", got[1].Text, want)
	}
}
