package swarm

import (
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Callouts: what Swarm does with a comment's @mentions
// (docs/reference/swarm.md, "How P4 Code Review renders a comment, and reads
// its mentions"). On every create and edit, CommentListener reads the raw
// body with Linkify::getCallouts (split on white space and < > { }, quotes
// and brackets trimmed, Markdown unknown): @name and @@name add a
// participant, @*name and @@*name a required reviewer, @@!name a group one
// member of which must vote (Swarm 2022.1
// module/Application/src/Filter/Linkify.php getCallouts;
// module/Comments/src/Listener/CommentListener.php; Reviews\Model\Review
// addRequired, addParticipant, setParticipantsData).

// Callouts are the names a body calls out, without their @, by kind.
type Callouts struct {
	Plain      []string // @name, @@name: participants
	Starred    []string // @*name, @@*name: required reviewers
	RequireOne []string // @@!name: a group one member of which must vote
}

var (
	// Linkify::WORD_PATTERN, without the u modifier: ASCII white space.
	calloutWords = regexp.MustCompile(`[\t\n\v\f\r <>{}]+`)
	calloutTrim  = regexp.MustCompile(`^[”’"'(<]*(.+?)[.”’"',!?:;)>]*$`)
	// PHP's \w under /u is Unicode letters, digits and the underscore.
	calloutPattern = regexp.MustCompile(`^(@{1,2})(\*|!?)([\pL\pN_]+[\\\pL\pN_.\-]{0,253})$`)
)

// GetCallouts reads body as getCallouts does. Its blacklist (@see, @todo,
// …) is compared with the name without its "@" and so never matches: it
// is left out here too.
func GetCallouts(body string) Callouts {
	var c Callouts
	for _, w := range calloutWords.Split(body, -1) {
		t := calloutTrim.FindStringSubmatch(w)
		if t == nil {
			continue
		}
		m := calloutPattern.FindStringSubmatch(t[1])
		switch {
		case m == nil:
		case m[2] == "*":
			c.Starred = appendNew(c.Starred, m[3])
		case m[2] == "!":
			if m[1] == "@@" {
				c.RequireOne = appendNew(c.RequireOne, m[3])
			}
		default:
			c.Plain = appendNew(c.Plain, m[3])
		}
	}
	return c
}

// Empty reports whether the body calls no one out.
func (c Callouts) Empty() bool { return len(c.Plain)+len(c.Starred)+len(c.RequireOne) == 0 }

func appendNew(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// groupPrefix names a group among a review's participants (Groups\Model\Config::KEY_PREFIX).
const groupPrefix = "swarm-group-"

// Participant is a review's participant: a user or swarm-group-<name>, and
// Required "", "true", or "1" (one member of the group).
type Participant struct {
	ID       string
	Required string
}

// applyCallouts changes review's participants by body's callouts as
// CommentListener does, for known users and groups only (AddUsers,
// AddGroup; Users\Model\User::exists, Groups\Model\Group::exists).
// Called with s.mu held.
func (s *Server) applyCallouts(review int64, body string) {
	rev, ok := s.revs[review]
	if !ok {
		return
	}
	c := GetCallouts(body)
	if c.Empty() {
		return
	}
	if rev.Required == nil {
		rev.Required = map[string]string{}
	}
	for _, id := range s.known(c.Plain) {
		if id != rev.Author {
			rev.Reviewers = appendNew(rev.Reviewers, id)
		}
	}
	for _, id := range s.known(c.Starred) {
		rev.Required[id] = "true"
	}
	for _, id := range s.known(c.RequireOne) {
		if strings.HasPrefix(id, groupPrefix) {
			rev.Required[id] = "1"
		}
	}
	s.revs[review] = rev
	s.log.Info("swarm callouts applied", "review", review, "participants", len(rev.Reviewers), "required", len(rev.Required))
}

// commented makes a comment's author a participant of its review, as Swarm
// 2022.1 does for every comment (Comments\Listener\CommentListener::
// commentCreated: "$review->addParticipant($comment->get('user'))").
// Called with s.mu held.
func (s *Server) commented(topic, user string) {
	review, err := strconv.ParseInt(strings.TrimPrefix(topic, "reviews/"), 10, 64)
	rev, ok := s.revs[review]
	if err != nil || !ok || user == "" || user == rev.Author || slices.Contains(rev.Reviewers, user) {
		return
	}
	rev.Reviewers = append(rev.Reviewers, user)
	s.revs[review] = rev
}

// known is the participant ids names stand for: users, then groups.
func (s *Server) known(names []string) []string {
	var out []string
	for _, n := range names {
		if slices.Contains(s.users, n) {
			out = append(out, n)
		}
		if _, ok := s.groups[n]; ok {
			out = append(out, groupPrefix+n)
		}
	}
	return out
}

// Participants are review's participants, sorted by id.
func (s *Server) Participants(review int64) []Participant {
	s.mu.Lock()
	rev := s.revs[review]
	s.mu.Unlock()
	return participantsOf(rev)
}

func participantsOf(r Review) []Participant {
	ids := map[string]string{}
	if r.Author != "" {
		ids[r.Author] = ""
	}
	for _, u := range r.Reviewers {
		ids[u] = ""
	}
	for u, req := range r.Required {
		ids[u] = req
	}
	out := make([]Participant, 0, len(ids))
	for id, req := range ids {
		out = append(out, Participant{ID: id, Required: req})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
