package letter

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/modeltext"
	"github.com/criticizer/criticizer/shared/render"
	"github.com/criticizer/criticizer/shared/rerun"
)

// rerunView is what a rerun's e-mail adds: this version's findings split
// into new and still open (each grouped by file, numbered on from the one
// before), the earlier findings now resolved, and how many earlier ones
// were not re-checked.
type rerunView struct {
	Previous     int    // the review version compared with
	PreviousJob  string // its job, for support
	New, Open    []render.File
	NNew, NOpen  int
	Resolved     []rerun.Earlier
	NotRechecked int
}

// rerunOf splits current by g: a finding is still open when g says its
// fingerprint was found in the previous version, else new.
func rerunOf(g *rerun.Groups, current []rerun.Current, cs *domain.Changeset) *rerunView {
	var fresh, open []domain.Finding
	for _, c := range current {
		if g.IsStillOpen(c.Fingerprint) {
			open = append(open, c.Finding)
		} else {
			fresh = append(fresh, c.Finding)
		}
	}
	return &rerunView{
		Previous: g.PreviousVersion, PreviousJob: domain.OneLine(g.PreviousJob),
		New: render.ByFile(fresh, cs, 0), Open: render.ByFile(open, cs, len(fresh)),
		NNew: len(fresh), NOpen: len(open),
		Resolved: g.Resolved, NotRechecked: len(g.NotRechecked),
	}
}

// line is the comparison in one sentence, naming the version compared
// with (and its job, for support).
func (r *rerunView) line() string {
	since := "review version " + strconv.Itoa(r.Previous)
	if r.PreviousJob != "" {
		since += " (job " + r.PreviousJob + ")"
	}
	return fmt.Sprintf("Since %s: %d new, %d still open, %d resolved, %d not re-checked.", since, r.NNew, r.NOpen, len(r.Resolved), r.NotRechecked)
}

// notRechecked says what "not re-checked" means, when there are any.
func (r *rerunView) notRechecked() string {
	switch r.NotRechecked {
	case 0:
		return ""
	case 1:
		return "1 earlier finding not re-checked: its file was not reviewed in full in this version, so whether it is fixed is not known."
	}
	return fmt.Sprintf("%d earlier findings not re-checked: their files were not reviewed in full in this version, so whether they are fixed is not known.", r.NotRechecked)
}

// resolvedNote says what "resolved" rests on.
const resolvedNote = "Gone from files that were reviewed in full in this version."

// resolvedText is one resolved finding: where it was, its severity and,
// while the previous job's result is kept, its title.
func resolvedText(f rerun.Earlier) (where, sev, title string) {
	where = domain.OneLine(f.File) + ":" + strconv.Itoa(f.Line)
	sev = strings.ToUpper(domain.OneLine(f.Severity))
	if sev == "" {
		sev = "FINDING"
	}
	return where, sev, modeltext.Plain(domain.OneLine(f.Title))
}
