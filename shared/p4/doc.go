// Package p4 owns every conversation with Perforce: running the p4 client
// safely (Runner) and turning a changelist into a domain.Changeset (Fetcher,
// the ChangeFetcher of rule AL-2), with the depot allow-list enforced before any
// command names a file.
//
// # Running p4
//
// Runner executes the client binary at a fixed, configured absolute path with
// exec.CommandContext — never through a shell — passing each argument as its
// own token, always behind the global flags "-ztag -Mj". The child gets an
// explicit environment (P4PORT, P4USER, P4CLIENT, P4TICKETS, P4PASSWD when
// configured, HOME, TMPDIR) and nothing inherited, a per-command timeout and a
// stdout size cap. Logs carry the command name, argument count, duration and
// exit code; argument values appear only when they are flags, numbers or
// syntactically valid depot paths, and never the password or stderr text.
//
// # What "-ztag -Mj" output looks like
//
// The client prints one JSON object per line on stdout. Every value is a
// string (numbers are decoded into their decimal text). The shapes this
// package relies on:
//
//	describe -s [-S] <cl>   one record: change, user, client, time, desc,
//	                        status, [shelved], depotFile<i>, action<i>,
//	                        type<i>, rev<i> for i = 0, 1, …
//	diff2 -du <l> <r>       a header {status, depotFile, rev, type,
//	                        depotFile2, rev2, type2}; status is "content",
//	                        "identical", "types", …; then zero or more
//	                        {"data": "<unified hunks>"} records
//	print <spec>            a header {depotFile, rev, change, action, type,
//	                        …}, then zero or more {"data": "<content>"} records
//	user -o <name>          one record: User, Email, FullName, [Update, Access]
//
// Content arrives in "data" records after the tagged header; several data
// records are concatenated in order. A "code" field, if present, is treated
// the way p4's marshalled output uses it: "stat", "text", "binary" and "info"
// are ordinary records (the field is dropped), while "error" and "warning"
// records are failures, like a non-zero exit status or anything on stderr.
// For the read-only commands used here, a warning (for example
// "//depot/x.c#9 - no such file(s).", which the real client prints with exit
// status 0) always means the answer is incomplete, so it fails closed.
//
// # Errors
//
// Every error returned is a *failure.Error. p4's text decides the class:
// connection refused, "TCP connect" failures and timeouts are
// failure.NetworkTimeout; invalid or expired credentials and missing
// permissions are failure.AuthDenied; unknown changelists and missing files are
// failure.NotFound; other failures are failure.Upstream5xx when the client
// died abnormally or reported a server-side error, failure.InternalBug
// otherwise (a usage error is our bug). Denied depot paths are
// failure.PolicyRejected, as is output over the size cap. Malformed output is
// failure.SchemaInvalid. stderr text included in an error is sanitized:
// truncated, control characters removed, the configured password and
// ticket-like strings masked.
package p4
