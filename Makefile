# Criticizer — the two commands are `make demo` and `make test`.
# Tool versions are pinned in versions.env (one place); Go's in go.mod too.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
include versions.env

GO       ?= go
# An execution count, not a duration: with a wall-clock -fuzztime, go1.26's fuzz
# coordinator can fail a target with a bare "context deadline exceeded" at the
# deadline (go.dev/issue/75804, fixed in go1.27); a count has no deadline to race.
# 30000 runs is ~1-15 s per target on 2 cores.
FUZZTIME ?= 30000x
ENV      ?= dev
# CDK's jsii runtime prints Node.js deprecation banners on Node 20.
export JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION := 1
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20
export JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION := 1

# The aws-cdk CLI at the version pinned in versions.env (npx fetches it once).
# CI=true and no stdin: a clean clone installs and runs it without a prompt.
CDK := CI=true npx --yes aws-cdk@$(AWS_CDK_CLI_VERSION)

FUNCTIONS := webhook fetch llm notify sweeper sesevents jobpage digest doctor
# go build flags of every bootstrap (internal/devstack.LambdaBuildFlags is the same list).
LAMBDA_BUILD_FLAGS := -tags lambda.norpc -trimpath -ldflags='-s -w'
# Fuzz targets run for FUZZTIME each in `make test` (package:Target).
FUZZ := ./shared/webhook:FuzzWebhook ./shared/envelope:FuzzDecode ./shared/result:FuzzParse ./shared/redact:FuzzRedact ./shared/render:FuzzCommentBodies

.PHONY: help setup build build-aws test unit integration mutate fuzz vet check validate vulncheck demo up down deploy-local invoke synth diff bootstrap deploy bench p4-layer clean chaos eval

# The fault-injection suite (integration/chaos_test.go) writes its counts here.
CHAOS_REPORT := $(CURDIR)/.run/chaos-report.txt
SEEDS ?=
JOBS  ?=

help: ## list the targets
	@grep -hE '^[a-z0-9-]+:.*## ' $(firstword $(MAKEFILE_LIST)) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

setup: ## install the pinned tools (MiniStack into .venv, Go modules)
	localstack/start.sh --install-only
	$(GO) mod download

build: ## build the Lambda bootstraps for the local emulator (host architecture)
	@for fn in $(FUNCTIONS); do \
	  CGO_ENABLED=0 GOOS=linux $(GO) build $(LAMBDA_BUILD_FLAGS) -o build/lambda/$$fn/bootstrap ./functions/$$fn; done

build-aws: ## build the Lambda bootstraps for AWS (linux/arm64, as the stack declares)
	@for fn in $(FUNCTIONS); do \
	  CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build $(LAMBDA_BUILD_FLAGS) -o build/lambda/$$fn/bootstrap ./functions/$$fn; done

vet: ## go vet (unit and integration builds)
	$(GO) vet ./...
	$(GO) vet -tags integration ./...

check: ## hygiene: gofmt, no unreachable code (deadcode -test), staticcheck; the tracked-file check is internal/repocheck's test
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "$$unformatted"; echo "not gofmt-formatted: run gofmt -w"; exit 1; fi
	@dead=$$($(GO) run golang.org/x/tools/cmd/deadcode@$(DEADCODE_VERSION) -test -tags integration ./...); \
	  if [ -n "$$dead" ]; then echo "$$dead"; echo "unreachable code: delete it"; exit 1; fi
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) -tags integration -checks all,-ST1000,-ST1003 ./...

vulncheck: ## known vulnerabilities reachable from the code (govulncheck; needs network)
	$(GO) run golang.org/x/vuln/cmd/govulncheck@$(GOVULNCHECK_VERSION) ./...

validate: ## cfn-lint and checkov (pinned, installed into .venv/validators) on the synthesized dev, staging and prod templates, against infra/cfncheck/baseline.json
	localstack/start.sh --install-validators
	$(GO) run ./infra/cfncheck -venv .venv/validators -baseline infra/cfncheck/baseline.json

test: setup vet check validate unit integration mutate eval ## unit tests, template validators, the emulator suite (fault injection on fixed seeds included), the mutation check, the review-quality eval against the stand-in, fuzzing
	@for f in $(FUZZ); do pkg=$${f%%:*}; tgt=$${f##*:}; \
	  echo "fuzz $$tgt ($(FUZZTIME))"; $(GO) test -run='^$$' -fuzz="^$$tgt\$$" -fuzztime=$(FUZZTIME) $$pkg; done

unit: ## unit tests only: go test ./... (no emulator; the emulator suite is behind the integration build tag)
	$(GO) test -count=1 ./...

integration: setup ## the emulator suite (integration/ and the devstack deploy test; emulator and stand-ins started and stopped by the harness)
	@mkdir -p .run && rm -f $(CHAOS_REPORT)
	@# The local model server (TestReviewByARealModelServer): installed before the suite's
	@# timeout starts, since a cold machine builds llama.cpp first (docs/development.md).
	localstack/llama.sh --install-only
	CHAOS_REPORT=$(CHAOS_REPORT) $(GO) test -tags integration -count=1 -timeout 40m ./integration ./internal/devstack
	@cat $(CHAOS_REPORT)

mutate: ## the mutation check: every mutation in cmd/mutate/mutations.json must be caught by the unit tests it names
	$(GO) run ./cmd/mutate

chaos: setup ## the fault-injection suite alone, any size: make chaos SEEDS=1,2,3 JOBS=40
	@mkdir -p .run && rm -f $(CHAOS_REPORT)
	CHAOS_SEEDS='$(SEEDS)' CHAOS_JOBS='$(JOBS)' CHAOS_REPORT=$(CHAOS_REPORT) \
	  $(GO) test -tags integration -count=1 -timeout 180m -run '^TestChaos$$' -v ./integration
	@cat $(CHAOS_REPORT)

EVAL_ARGS ?=
# LLM=local: a real model server started here (llama.cpp with SmolLM2-135M, installed once
# by localstack/llama.sh) instead of the stand-in, for `make demo` and `make eval`.
LLM ?=
LOCAL_EVAL_ARGS := -provider local -prompts 1.0.0
eval: ## review quality over the labelled corpus (eval/corpus); default: the LLM stand-in. make eval LLM=local: a local model server; your own: make eval EVAL_ARGS='-provider openai -endpoint … -model … -response-format auto -context-tokens …'
	$(GO) run ./cmd/eval $(if $(filter local,$(LLM)),$(LOCAL_EVAL_ARGS)) $(EVAL_ARGS)

demo: setup ## emulator up, stack deployed, sample changelist reviewed, the e-mail printed; a Swarm review's comments printed, version 1 and 2. LLM=local: reviewed by a real model server
	$(GO) run ./cmd/devstack demo $(if $(LLM),-llm $(LLM))

up: setup ## run the local environment in the foreground (Ctrl-C stops it); then `make invoke`
	$(GO) run ./cmd/devstack run

invoke: ## invoke a deployed function with a sample event: make invoke FN=fetch EVENT=events/sqs-fetch.json
	$(GO) run ./cmd/devstack invoke -fn $(FN) -event $(EVENT)

deploy-local: setup build ## deploy to an emulator already running on $AWS_ENDPOINT_URL (stock cdk bootstrap + deploy)
	$(GO) run ./cmd/devstack deploy

down: ## stop a detached emulator
	$(GO) run ./cmd/devstack down

synth: build-aws ## cdk synth for ENV (default dev) into cdk.out
	$(CDK) synth --quiet -c env=$(ENV) > /dev/null
	@ls -l cdk.out/*.template.json

diff: build-aws ## cdk diff ENV against the deployed stack in your credentials' account
	$(CDK) diff -c env=$(ENV)

bootstrap: ## cdk bootstrap the account/region of your credentials (once per account and region)
	$(CDK) bootstrap -c env=$(ENV)

deploy: build-aws ## cdk deploy ENV to the AWS account in your credentials
	$(CDK) deploy -c env=$(ENV) --require-approval broadening

bench: ## every benchmark plus bootstrap size and cold start per function, and a local model server's speed, as one table (raw output in .run/bench.txt)
	@mkdir -p .run
	$(GO) run ./cmd/bench -raw .run/bench.txt -requests-doc docs/benchmarks.md | tee .run/bench.md

P4   ?=
ARCH ?= arm64
p4-layer: ## stage a Perforce client you chose as the p4 Lambda layer: make p4-layer P4=/path/to/p4 P4_SHA256=<its SHA-256> [ARCH=arm64] -> build/p4-layer/bin/p4 + p4-layer.json
	$(GO) run ./cmd/p4layer -p4 "$(P4)" -sha256 "$(P4_SHA256)" -arch $(ARCH) -out build/p4-layer

clean: ## remove build output
	rm -rf build cdk.out .run/logs
