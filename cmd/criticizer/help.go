package main

import "slices"

// usage is what `criticizer`, `criticizer help` and `criticizer -h` print:
// every command, read from nothing but this text (no AWS call).
const usage = `criticizer: operate a Criticizer deployment (docs/operating.md)

  criticizer [--stack NAME] [--json] doctor [--change CL] [--review ID]   pre-flight: Perforce, Swarm, the model and e-mail checked from the functions' network, a verdict and fix per check; fails if any check fails
  criticizer doctor --local [--change CL] [--review ID]                   the same on the local emulator (AWS_ENDPOINT_URL, make up), against the stand-ins
  criticizer [--stack NAME] [--json] dlq list   [--stage fetch|llm|notify|all] [--max N]
  criticizer [--stack NAME] [--json] dlq show   MESSAGE_ID [--stage S|all]
  criticizer [--stack NAME] [--json] dlq replay --stage S (--id MSG | --job ID | --error-class C | --all) --note TEXT [--max N]
  criticizer [--stack NAME] [--json] restart JOB_ID --note TEXT
  criticizer [--stack NAME] resolve JOB_ID --note TEXT             after a replay: verify it succeeded, record the resolution
  criticizer [--stack NAME] [--json] job JOB_ID
  criticizer [--stack NAME] [--json] outbox JOB_ID                      the job's delivery rows (e-mails, Swarm comments)
  criticizer [--stack NAME] outbox requeue JOB_ID RECIPIENT|ITEM --note TEXT  not delivered: send again on the next run
  criticizer [--stack NAME] outbox confirm JOB_ID RECIPIENT|ITEM --evidence TEXT   delivered (checked by hand): never resend
  criticizer [--stack NAME] [--json] outbox reconcile                    rows the reconciler could not settle
  criticizer [--stack NAME] outbox reconcile resolve JOB_ID RECIPIENT|ITEM --delivered|--not-delivered --note TEXT
  criticizer [--stack NAME] secret rotate webhook|swarm [--overlap 24h]   new caller credential; the old one verifies until then
  criticizer [--stack NAME] secret revoke-previous webhook|swarm           the old caller credential stops verifying now
  criticizer [--stack NAME] [--json] outcomes report [--by DIMENSION] [--path-depth N]  acceptance of posted findings by prompt version, model, category, severity, rule id, depot path
  criticizer [--stack NAME] outcomes export > outcomes.jsonl              every outcome record as JSON lines, for go run ./cmd/eval -outcomes
  criticizer [--stack NAME] [--json] outcomes suppressions [--env ENV] [--cdk cdk.json]   finding kinds withheld under a depot path as repeatedly dismissed, by the environment's policy, with who dismissed them
  criticizer [--stack NAME] outcomes allow SCOPE CATEGORY KIND          report a withheld kind there again
  criticizer [--stack NAME] outcomes confirm SCOPE CATEGORY KIND        let a suppression waiting for confirmation (dismissConfirm) apply
  criticizer promote --env ENV [--cdk cdk.json] [--window 24h] [--min-jobs 20]  the candidate prompt to 100% if its canary meets the rollout SLOs
  criticizer promote --env ENV --model [--cdk cdk.json] [--window 24h] [--min-jobs 20]  the candidate model becomes llmModel if its canary meets the stable prompt's SLOs and acceptance
  criticizer help                                                         this list

--stack defaults to CRITICIZER_STACK, else Criticizer-<CRITICIZER_ENV>, else Criticizer-local.
Commands that change state record the actor (CRITICIZER_ACTOR or the login name) and the note in the job's history.
AWS credentials, region and AWS_ENDPOINT_URL come from the usual SDK sources.
`

func isHelp(arg string) bool { return slices.Contains([]string{"help", "-h", "-help", "--help"}, arg) }
