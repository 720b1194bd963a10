// Package p4 owns every conversation with Perforce: running the p4 client
// safely (Runner) and turning a changelist into a domain.Changeset (Fetcher,
// the ChangeFetcher of rule AL-2), with the depot allow-list enforced before
// any command names a file.
//
// # Running p4
//
// Runner executes the client at a fixed absolute path with
// exec.CommandContext — never through a shell — each argument its own
// token, always behind "-ztag -Mj". The child gets an explicit environment
// (P4PORT, P4USER, P4CLIENT, P4TICKETS, P4TRUST, P4CHARSET, P4PASSWD when
// configured, HOME, TMPDIR) and nothing inherited, a per-command timeout and
// a stdout size cap.
//
// Credentials come from a CredentialSource (Secrets Manager, rotatable): a
// password goes to "p4 login -a" on stdin (a ticket valid from every host: a
// Lambda's address may change), a long-lived ticket as P4PASSWD in the
// child's environment; neither ever appears in argv or a log. A rejected
// session reads the secret afresh, logs in again and retries the command,
// at most once. A configured ssl fingerprint is installed with "p4 trust -i"
// before the first command; a server key that differs later is
// failure.SecurityFailure (possible interception). Logs carry argument
// values only when they are flags, numbers or valid depot paths, never the
// password or stderr text.
//
// # What "-ztag -Mj" output looks like
//
// (docs/reference/p4-cli.md.) One JSON object per line on stdout, read by
// its shape: a server message {"data", "generic", "severity"} (numbers, no
// "code"; severity 2 a warning with exit status 0, 3 and 4 errors); an info
// line {"data", "level"}, dropped; anything else data: a tagged record, or a
// {"data": …} content chunk after a print header. A warning with exit
// status 0 ("no such file(s)", "protected namespace", "not in client view")
// means an incomplete answer: the command fails with its class. Client-side
// failures are plain text on stderr; a refused ssl: key may come either
// way, and both are read alike.
//
//	describe -s [-S] <cl>   one record: change, user, client, time, desc,
//	                        status, [shelved], depotFile<i>, action<i>,
//	                        type<i>, rev<i> for i = 0, 1, …
//	print -k <spec>…        per file a header {depotFile, rev, change, action,
//	                        type, …}, then {"data"} records, the last empty
//	filelog -m1 <spec>…     per file {depotFile, rev0, action0, …, how0,<n>,
//	                        file0,<n>, srev0,<n>, erev0,<n>}: the move's origin
//	                        is the record whose how is "moved from", at any n
//	user -o <name>          one record: User, Email, FullName, [Update, Access]
//	protects                per line {perm, host, user, line, depotFile,
//	                        [isgroup], [unmap]}: line is the line's number
//	protects -M <path>      one record: permMax
//
// Which fields are verified against real servers, and from which source:
// docs/reference/p4-cli.md, "Added by this project". The recorded shapes
// are fixtures in internal/standin/p4/testdata/realshapes, which the
// stand-in must print and this package's tests read.
//
// # Errors
//
// Every error returned is a *failure.Error, classed by p4's text (classify's
// table: a changed server key, protections, credentials, connection trouble,
// our configuration, things that do not exist), else by the exit status.
// Denied depot paths and output over the cap are failure.PolicyRejected,
// malformed output failure.SchemaInvalid. p4's text in an error is
// sanitized: truncated, control characters removed, the password and
// ticket-like strings masked.
package p4
