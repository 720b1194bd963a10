// Package pipeline owns what each stage does for a job, as stage.Processor
// implementations: Fetch (p4 → raw and redacted changeset artifacts and the
// recipient list), Review (redacted changeset → prompt → LLM → validated
// ReviewResult) and Notify (ReviewResult → one e-mail per recipient through
// the outbox, send first then mark). Leases, retries and dead letters are
// the stage runtime's business, not theirs.
package pipeline
