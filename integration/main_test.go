//go:build integration

package integration

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/criticizer/criticizer/internal/devstack"
	"github.com/criticizer/criticizer/internal/faultproxy"
	llmstandin "github.com/criticizer/criticizer/internal/standin/llm"
	smtpstandin "github.com/criticizer/criticizer/internal/standin/smtp"
	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/queue"
	"github.com/criticizer/criticizer/shared/secrets"
	"github.com/criticizer/criticizer/shared/store"
)

// env is what the tests share.
var env struct {
	local      *devstack.Local
	out        devstack.Outputs
	apiURL     string
	depot      string
	llm        *llmstandin.Server
	smtp       *smtpstandin.Server
	webhookKey []byte
	secrets    map[string]string

	ddb    *dynamodb.Client
	sqs    *sqs.Client
	lambda *lambda.Client
	sm     *secretsmanager.Client
	jobs   *store.Store
	outbox *outbox.Outbox
	// deliveryKey is the stack's delivery key (DeliveryKeySecretArn).
	deliveryKey *delivery.Secret
	queues      *queue.Queues
	lease       time.Duration
	quiet       *slog.Logger
	// proxy sits between every function and the emulator's AWS APIs; it
	// forwards unchanged unless a test installs a fault plan.
	proxy *faultproxy.Proxy
}

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration harness:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	env.proxy = faultproxy.New()
	if err := env.proxy.Start(); err != nil {
		return 0, err
	}
	defer env.proxy.Close()
	l, err := devstack.StartLocal(ctx, devstack.LocalOptions{FunctionEndpoint: func(emulator string) string {
		_ = env.proxy.SetUpstream(emulator) // a URL the emulator itself built: always valid
		return env.proxy.URL()
	}})
	if err != nil {
		return 0, err
	}
	defer l.Close()
	defer stopModelServer() // started by the first test that needs it (ownmodel_test.go)
	fmt.Fprintf(os.Stderr, "integration harness: stack %s up on %s in %s\n", l.StackName, l.Emulator.Endpoint, time.Since(start).Round(time.Second))

	env.local, env.out, env.apiURL, env.depot = l, l.Outputs, l.APIURL, l.Depot
	env.llm, env.smtp, env.webhookKey, env.secrets = l.LLM, l.SMTP, l.WebhookKey, l.Secrets
	cfg := l.AWS
	env.ddb, env.sqs, env.lambda, env.sm = dynamodb.NewFromConfig(cfg), sqs.NewFromConfig(cfg), lambda.NewFromConfig(cfg), secretsmanager.NewFromConfig(cfg)
	env.jobs = store.New(env.ddb, env.out["JobsTableName"])
	// The stack's delivery key: the deployed notify stage keys its rows by it.
	dk, _, err := secrets.New(env.sm, secrets.CacheTTL).Get(context.Background(), env.out["DeliveryKeySecretArn"], secrets.Current)
	if err != nil {
		return 0, err
	}
	if env.deliveryKey, err = delivery.NewSecret(dk); err != nil {
		return 0, err
	}
	env.outbox = outbox.New(env.ddb, env.out["JobsTableName"]).WithSecret(env.deliveryKey)
	env.queues = queue.New(env.sqs, stageURLs("QueueUrl"), stageURLs("DlqUrl"))
	env.lease = 10 * time.Second
	env.quiet = slog.New(slog.NewTextHandler(io.Discard, nil))
	return m.Run(), nil
}

func stageURLs(suffix string) map[domain.Stage]string {
	return map[domain.Stage]string{
		domain.StageFetch:  env.out["Fetch"+suffix],
		domain.StageLLM:    env.out["Llm"+suffix],
		domain.StageNotify: env.out["Notify"+suffix],
	}
}
