// Package integration holds the tests that run against real parts: the CDK
// stack deployed to the AWS emulator (DynamoDB, SQS, S3, Secrets Manager,
// API Gateway, Lambda event source mappings running the real bootstrap
// binaries), the p4 stand-in over a fixture depot, the LLM stand-in speaking
// the provider's wire format and a real SMTP server, all on 127.0.0.1.
//
// One TestMain starts everything once (devstack.StartLocal, the same
// environment `make demo` uses) and stops it at the end; tests share the
// stack and isolate themselves with fresh changelist numbers and keys.
//
// Every test file carries the build tag `integration`: `go test ./...` runs
// the unit tests only and never starts the emulator; `make integration`
// (go test -tags integration) runs this suite.
package integration
