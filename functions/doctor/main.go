// Command doctor is the pre-flight (shared/doctor) of `criticizer doctor`:
// it checks Perforce, P4 Code Review, the model and the e-mail identity
// from the functions' network; it changes nothing and logs no verdict.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"github.com/criticizer/criticizer/shared/coldstart"
	"github.com/criticizer/criticizer/shared/doctor"
	"github.com/criticizer/criticizer/shared/sanitize"
	"github.com/criticizer/criticizer/shared/secrets"
)

func main() {
	ctx := context.Background()
	env := coldstart.Must(coldstart.Load(ctx, "doctor", sanitize.Logs))
	set := doctor.SettingsFromEnv(env.Vars, env.Log)
	coldstart.Must(env, env.Vars.Err())
	d := doctor.New(ctx, set, doctor.Deps{AWS: env.AWS, Log: env.Log,
		Secrets: secrets.New(secretsmanager.NewFromConfig(env.AWS), secrets.CacheTTL), SES: sesv2.NewFromConfig(env.AWS)})
	lambda.Start(d.Handle)
}
