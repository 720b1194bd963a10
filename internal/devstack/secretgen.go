package devstack

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// fixGeneratedSecrets works around an emulator deviation: MiniStack's
// CloudFormation ignores GenerateSecretString's ExcludePunctuation, so a
// generated value may hold any punctuation — a webhook key may even start
// with "{" and read as a JSON credential, which AWS never generates. Each
// secret the template generates without punctuation whose value the
// emulator generated with some gets a value of the same shape and length
// that AWS could have generated, before anything reads it.
func fixGeneratedSecrets(ctx context.Context, cfg aws.Config, assemblyDir, stackName string) error {
	b, err := os.ReadFile(filepath.Join(assemblyDir, stackName+".template.json"))
	if err != nil {
		return err
	}
	var tpl struct {
		Resources map[string]struct {
			Type       string
			Properties struct {
				GenerateSecretString *secretGenerator
			}
		}
	}
	if err := json.Unmarshal(b, &tpl); err != nil {
		return fmt.Errorf("%s template: %w", stackName, err)
	}
	cf, sm := cloudformation.NewFromConfig(cfg), secretsmanager.NewFromConfig(cfg)
	for logical, r := range tpl.Resources {
		g := r.Properties.GenerateSecretString
		if r.Type != "AWS::SecretsManager::Secret" || g == nil || !g.ExcludePunctuation {
			continue
		}
		res, err := cf.DescribeStackResource(ctx, &cloudformation.DescribeStackResourceInput{StackName: aws.String(stackName), LogicalResourceId: aws.String(logical)})
		if err != nil {
			return fmt.Errorf("secret %s: %w", logical, err)
		}
		id := aws.ToString(res.StackResourceDetail.PhysicalResourceId)
		cur, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(id)})
		if err != nil {
			return fmt.Errorf("secret %s: %w", logical, err)
		}
		value, fixed, err := g.conform(aws.ToString(cur.SecretString))
		if err != nil {
			return fmt.Errorf("secret %s: %w", logical, err)
		}
		if !fixed {
			continue
		}
		if _, err := sm.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: aws.String(id), SecretString: aws.String(value)}); err != nil {
			return fmt.Errorf("secret %s: %w", logical, err)
		}
		Logf("secret %s: the emulator generated punctuation the template excludes; regenerated", logical)
	}
	return nil
}

// secretGenerator is the part of GenerateSecretString the fix reads.
type secretGenerator struct {
	ExcludePunctuation   bool
	SecretStringTemplate string
	GenerateStringKey    string
}

const alphanumerics = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// conform returns value with its generated part replaced by alphanumerics
// of the same length when that part holds anything else; fixed says
// whether it did.
func (g secretGenerator) conform(value string) (string, bool, error) {
	generated, key := value, cmp.Or(g.GenerateStringKey, "password")
	var obj map[string]any
	if g.SecretStringTemplate != "" {
		if err := json.Unmarshal([]byte(value), &obj); err != nil {
			return "", false, fmt.Errorf("value is not the template's JSON: %w", err)
		}
		generated, _ = obj[key].(string)
		if _, ok := obj[key]; !ok {
			return "", false, fmt.Errorf("value has no %q", key)
		}
	}
	if !strings.ContainsFunc(generated, func(r rune) bool { return !strings.ContainsRune(alphanumerics, r) }) {
		return value, false, nil
	}
	// rand.Text is base32 (A-Z, 2-7): letters and digits, as AWS generates.
	var fresh strings.Builder
	for fresh.Len() < len(generated) {
		fresh.WriteString(rand.Text())
	}
	regenerated := fresh.String()[:len(generated)]
	if obj == nil {
		return regenerated, true, nil
	}
	obj[key] = regenerated
	out, err := json.Marshal(obj)
	return string(out), true, err
}
