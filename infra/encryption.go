package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/jsii-runtime-go"
)

// dataKeyID is the construct id of the customer-managed key (created or imported).
const dataKeyID = "DataKey"

// dataKey is the environment's customer-managed KMS key, or nil when kmsKey
// is unset (AWS-managed encryption). Every section asks for it; the first
// call creates (kmsKey "create") or imports (a key ARN) it, later calls find it.
func dataKey(stack awscdk.Stack, cfg EnvConfig) awskms.IKey {
	if cfg.KMSKey == "" {
		return nil
	}
	if c := stack.Node().TryFindChild(jsii.String(dataKeyID)); c != nil {
		return c.(awskms.IKey)
	}
	if cfg.KMSKey != "create" {
		// An imported key's policy is the studio's: docs/network-and-iam.md
		// ("Customer-managed key") lists the service principals it must allow.
		return awskms.Key_FromKeyArn(stack, jsii.String(dataKeyID), jsii.String(cfg.KMSKey))
	}
	key := awskms.NewKey(stack, jsii.String(dataKeyID), &awskms.KeyProps{
		Description:       jsii.String("Criticizer data key: jobs table, queues, artifacts, secrets, logs, alarm topic"),
		EnableKeyRotation: jsii.Bool(true),
		RemovalPolicy:     awscdk.RemovalPolicy_RETAIN,
	})
	pinID(key, dataKeyID)
	// The functions' roles get their use through IAM grants (the default key
	// policy delegates to the account). Services that encrypt on the stack's
	// behalf need the key policy: CloudWatch Logs for the log groups,
	// CloudWatch alarms and EventBridge publishing to the encrypted topic and
	// dead-letter queue, CloudTrail for the raw bucket's trail.
	region, account, partition := awscdk.Aws_REGION(), awscdk.Aws_ACCOUNT_ID(), awscdk.Aws_PARTITION()
	key.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("CloudWatchLogs"),
		Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("logs."+*region+".amazonaws.com"), nil)},
		Actions:    jsii.Strings("kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*"),
		Resources:  jsii.Strings("*"),
		Conditions: &map[string]any{"ArnLike": map[string]any{
			"kms:EncryptionContext:aws:logs:arn": "arn:" + *partition + ":logs:" + *region + ":" + *account + ":log-group:*"}},
	}), jsii.Bool(false))
	key.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid: jsii.String("AlarmsAndEventsPublish"),
		Principals: &[]awsiam.IPrincipal{
			awsiam.NewServicePrincipal(jsii.String("cloudwatch.amazonaws.com"), nil),
			awsiam.NewServicePrincipal(jsii.String("events.amazonaws.com"), nil),
		},
		// As AWS documents it for encrypted topics and queues: these services
		// do not all pass aws:SourceAccount to KMS, and a denied publish would
		// lose alarms silently.
		Actions:   jsii.Strings("kms:Decrypt", "kms:GenerateDataKey*"),
		Resources: jsii.Strings("*"),
	}), jsii.Bool(false))
	key.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("CloudTrail"),
		Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("cloudtrail.amazonaws.com"), nil)},
		Actions:    jsii.Strings("kms:GenerateDataKey*", "kms:DescribeKey"),
		Resources:  jsii.Strings("*"),
		Conditions: &map[string]any{"StringLike": map[string]any{
			"kms:EncryptionContext:aws:cloudtrail:arn": "arn:" + *partition + ":cloudtrail:*:" + *account + ":trail/*"}},
	}), jsii.Bool(false))
	return key
}
