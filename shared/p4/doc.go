// Package p4 owns every conversation with Perforce: running the p4 client
// safely (Runner) and turning a changelist into a domain.Changeset (Fetcher,
// the ChangeFetcher of rule AL-2), with the depot allow-list enforced before any
// command names a file.
//
// Fetcher gets a changelist in a few round trips: the service user's
// protections (protects, and protects -M per allow-list entry), one
// describe, print of many file revisions per command on a bounded pool of
// p4 processes (diffs are computed here, with shared/udiff), filelog for
// moves, one user -o.
//
// # Running p4
//
// Runner executes the client binary at a fixed, configured absolute path with
// exec.CommandContext — never through a shell — passing each argument as its
// own token, always behind the global flags "-ztag -Mj". The child gets an
// explicit environment (P4PORT, P4USER, P4CLIENT, P4TICKETS, P4TRUST,
// P4CHARSET, P4PASSWD when configured, HOME, TMPDIR) and nothing inherited, a
// per-command timeout and a stdout size cap.
//
// Credentials come from a CredentialSource (Secrets Manager, rotatable): a
// password is given to "p4 login" on stdin and the ticket kept in the
// P4TICKETS file; a long-lived ticket is passed as P4PASSWD in the child's
// environment. Neither ever appears in argv or a log. A password logs in
// with "p4 login -a" (a ticket valid from every host: a Lambda's outbound
// address may change). Whenever the server rejects the session, the runner
// reads the secret afresh, logs in again and retries the command, at most
// once per command; a configured ssl fingerprint is installed with
// "p4 trust -i" before the first command, and a server key that differs
// from it later is failure.SecurityFailure (possible interception). Logs carry the command name, argument count, duration and
// exit code; argument values appear only when they are flags, numbers or
// syntactically valid depot paths, and never the password or stderr text.
//
// # What "-ztag -Mj" output looks like
//
// (docs/reference/p4-cli.md.) The client prints one JSON object per line
// on stdout, keys sorted, for data records and server messages alike. Each
// line is read by its shape:
//
//   - a server message {"data": text, "generic": n, "severity": n}, numbers,
//     no "code" key: severity 2 is a warning (exit status stays 0), 3 and 4
//     errors (exit status 1);
//   - an info line {"data": text, "level": n}: dropped;
//   - anything else is data: a tagged record of strings, or a {"data": …}
//     content chunk after a print/diff2 header.
//
// Success is decided per record as well as by the exit status: a warning
// printed with exit status 0 ("no such file(s)", "protected namespace",
// "not in client view") means the answer is incomplete, so the command
// fails with the warning's class. Client-side failures ("Perforce client
// error:" — cannot connect, DNS) are plain text on stderr; a refused ssl:
// key may come either there or as a -Mj message on stdout, and both are
// read alike.
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
// Every error returned is a *failure.Error. p4's text decides the class:
// a server key that differs from the pinned fingerprint is
// failure.SecurityFailure (never retried); a protected namespace is failure.PolicyRejected (fail closed, logged as a
// security event); invalid or expired credentials and missing permissions
// are failure.AuthDenied; client-side connect failures and timeouts are
// failure.NetworkTimeout; an unknown client or a path outside the client
// view is failure.InternalBug (the deployment's configuration); unknown
// changelists and missing files are failure.NotFound; other failures are
// failure.Upstream5xx when the client died abnormally or reported a
// server-side error, failure.InternalBug otherwise (a usage error is our
// bug). The server's text, sanitized, is part of the error and so of the
// dead letter's reason. Denied depot paths are
// failure.PolicyRejected, as is output over the size cap. Malformed output is
// failure.SchemaInvalid. stderr text included in an error is sanitized:
// truncated, control characters removed, the configured password and
// ticket-like strings masked.
package p4
