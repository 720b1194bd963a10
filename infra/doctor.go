package main

import (
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/jsii-runtime-go"

	"github.com/criticizer/criticizer/shared/settings"
)

// newDoctorFunction: the pre-flight (functions/doctor, shared/doctor),
// invoked by `criticizer doctor`. It must meet Perforce, Swarm, the model
// and the e-mail relay as the pipeline does, so it runs where fetch runs
// (the VPC, with the p4 layer) and gets their settings and only read
// access to their secrets; no table, queue or bucket. Its settings are
// those whose declarations name the doctor (TestDoctorFunction holds them
// to the functions').
func newDoctorFunction(f *functionFactory, p functionsProps, p4Layer awslambda.LayerVersion) awslambda.Function {
	cfg, sec := f.cfg, p.secrets
	var layers []awslambda.ILayerVersion
	if p4Layer != nil {
		layers = append(layers, p4Layer)
	}
	env := map[string]*string{settings.P4SecretID.Name: sec.p4.SecretArn()}
	grantRead := []awssecretsmanager.Secret{sec.p4}
	if cfg.EmailProvider != "ses" {
		env[settings.SMTPSecretID.Name] = sec.smtp.SecretArn()
		grantRead = append(grantRead, sec.smtp)
	}
	if cfg.SwarmURL != "" {
		env[settings.SwarmAPISecretID.Name] = sec.swarmAPI.SecretArn()
		grantRead = append(grantRead, sec.swarmAPI)
	}
	// A few commands per system, each bounded by its own timeout.
	fn := f.newFn(fnSpec{id: "DoctorFunction", asset: "doctor", memory: 256, timeout: 300, layers: layers,
		privateNetwork: true, swarmCaller: true, env: env})
	for _, s := range grantRead {
		s.GrantRead(fn, nil)
	}
	if key := dataKey(f.stack, cfg); key != nil {
		key.GrantDecrypt(fn) // its environment is encrypted with the data key
	}
	grantModel(fn, cfg, sec.llm, cfg.LLMModel) // the configured model only
	if cfg.EmailProvider == "ses" {
		// Reads the verification of the From domain (what the check asks)
		// and of the identity notify sends as; sends nothing.
		arn := func(id string) *string {
			return awscdk.Fn_Sub(jsii.String("arn:${AWS::Partition}:ses:${AWS::Region}:${AWS::AccountId}:identity/"+id), nil)
		}
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings("ses:GetEmailIdentity"),
			Resources: &[]*string{arn(cfg.SMTPFrom[strings.LastIndexByte(cfg.SMTPFrom, '@')+1:]), arn(sesIdentity(cfg))},
		}))
	}
	awscdk.NewCfnOutput(f.stack, jsii.String("DoctorFunctionName"), &awscdk.CfnOutputProps{Value: fn.FunctionName()})
	return fn
}
