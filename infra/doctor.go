package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
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
func newDoctorFunction(f *functionFactory, p functionsProps) {
	cfg, sec := f.cfg, p.secrets
	// A few commands per system, each bounded by its own timeout.
	fn := f.newFn(fnSpec{id: "DoctorFunction", asset: "doctor", memory: 256, timeout: 300,
		perforce: true, swarmCaller: true, noAlarms: true})
	readSecret(fn, settings.P4SecretID.Name, sec.p4)
	if cfg.EmailProvider != "ses" {
		readSecret(fn, settings.SMTPSecretID.Name, sec.smtp)
	}
	if cfg.SwarmURL != "" {
		readSecret(fn, settings.SwarmAPISecretID.Name, sec.swarmAPI)
	}
	if key := dataKey(f.stack, cfg); key != nil {
		key.GrantDecrypt(fn) // its environment is encrypted with the data key
	}
	grantModel(fn, cfg, sec.llm, cfg.LLMModel) // the configured model only
	if cfg.EmailProvider == "ses" {
		// Reads the verification of the From domain (what the check asks)
		// and of the identity notify sends as; sends nothing.
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings("ses:GetEmailIdentity"),
			Resources: &[]*string{sesARN("identity", fromDomain(cfg)), sesARN("identity", sesIdentity(cfg))},
		}))
	}
}
