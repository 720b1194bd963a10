package main

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// keywordRe matches an RCS keyword as stored ($Id$) or as an earlier
// expansion left it ($Id: … $): print expands both.
var keywordRe = regexp.MustCompile(`\$(Id|Header|Date|DateTime|Change|File|Revision|Author)(?::[^$\n]*)?\$`)

// expandKeywords is "p4 print" without -k on a +k file (ktext, text+k) or
// +ko (only $Id$ and $Header$) (reference, "Keywords, trust, tickets, edge
// servers": "p4 print expands RCS keywords … in files of type +k by
// default"; forms from the command reference's file types page), in UTC.
func expandKeywords(content, fileType, path string, rev int, change int64, user string, at time.Time) string {
	base, mods, _ := strings.Cut(fileType, "+")
	onlyID := strings.Contains(mods, "ko")
	if !strings.HasPrefix(base, "k") && !strings.Contains(mods, "k") {
		return content
	}
	return keywordRe.ReplaceAllStringFunc(content, func(m string) string {
		name := keywordRe.FindStringSubmatch(m)[1]
		var v string
		switch name {
		case "Id", "Header":
			v = path + "#" + strconv.Itoa(rev)
		case "Date":
			v = at.UTC().Format("2006/01/02")
		case "DateTime":
			v = at.UTC().Format("2006/01/02 15:04:05")
		case "Change":
			v = strconv.FormatInt(change, 10)
		case "File":
			v = path
		case "Revision":
			v = "#" + strconv.Itoa(rev)
		case "Author":
			v = user
		}
		if onlyID && name != "Id" && name != "Header" {
			return m
		}
		return "$" + name + ": " + v + " $"
	})
}
