package result

import (
	"fmt"

	"github.com/criticizer/criticizer/shared/domain"
)

// ReasonLineNotShown drops a finding whose line, or any line of its range,
// is not among the new-revision lines of that file the model was shown (the
// hunks of its diff in that request, after any cut). A model cannot have
// seen what it claims there: such a finding is fabricated or misplaced.
const ReasonLineNotShown = "line_not_shown"

// maxCheckedRange bounds the range checked line by line; a longer range is
// itself implausible for a finding on shown lines and is dropped.
const maxCheckedRange = 10000

// KeepShown keeps the findings whose every line lies in the text the model
// was shown for their file (shown maps file -> line -> text, Chunk.Shown)
// and drops the others, each with a finding_dropped/line_not_shown
// diagnostic.
func KeepShown(fs []domain.Finding, shown map[string]map[int]string) ([]domain.Finding, Diagnostics) {
	var diags Diagnostics
	kept := fs[:0:0]
	for i, f := range fs {
		lines := shown[f.File]
		end := max(f.EndLine, f.Line)
		missing := 0
		if end-f.Line > maxCheckedRange {
			missing = f.Line
		}
		for n := f.Line; missing == 0 && n <= end; n++ {
			if _, ok := lines[n]; !ok {
				missing = n
			}
		}
		if missing == 0 {
			kept = append(kept, f)
			continue
		}
		diags = append(diags, Diagnostic{Kind: KindFindingDropped, Reason: ReasonLineNotShown, FindingID: clip(f.ID, 64),
			Index: i, Field: "line", File: f.File, Line: f.Line,
			Detail: fmt.Sprintf("line %d of the range %d-%d is not in the diff the model was shown", missing, f.Line, end)})
	}
	return kept, diags
}
