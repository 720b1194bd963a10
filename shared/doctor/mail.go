package doctor

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
)

// SESAPI is the part of the SES v2 client the identity check calls.
type SESAPI interface {
	GetEmailIdentity(ctx context.Context, in *sesv2.GetEmailIdentityInput, opts ...func(*sesv2.Options)) (*sesv2.GetEmailIdentityOutput, error)
}

// Mail checks what notify sends as: the SMTP relay reached and logged in to
// (Probe), or the SES identity verified.
type Mail struct {
	Provider string // EMAIL_PROVIDER: smtp or ses
	From     string
	// Relay names the SMTP relay; Probe logs in without sending
	// (smtpmail.Probe).
	Relay string
	Probe func(ctx context.Context) error
	// SES and Identity (the domain of From, or sesIdentity) for ses.
	SES      SESAPI
	Identity string
}

// CheckMail is the e-mail check's name.
const CheckMail = "e-mail identity"

func (c *Mail) checks(ctx context.Context) []Verdict {
	if c.Provider == "ses" {
		return []Verdict{c.ses(ctx)}
	}
	if err := c.Probe(ctx); err != nil {
		return []Verdict{bad(Fail, CheckMail, err.Error(), "check smtpHost, smtpPort and smtpTLS, that the functions' network reaches the relay, and the login in SMTP_SECRET_ID (output SmtpSecretArn) (docs/configuration.md); "+elsewhere)}
	}
	return []Verdict{ok(CheckMail, "the SMTP relay %s accepts the connection and the login; mail is sent as %s", c.Relay, c.From)}
}

func (c *Mail) ses(ctx context.Context) Verdict {
	out, err := c.SES.GetEmailIdentity(ctx, &sesv2.GetEmailIdentityInput{EmailIdentity: aws.String(c.Identity)})
	if err != nil {
		return bad(Fail, CheckMail, fmt.Sprintf("SES identity %s: %v", c.Identity, err), "create and verify the identity in SES (the domain of smtpFrom, or sesIdentity) in the stack's region (docs/configuration.md, step by step)")
	}
	if !out.VerifiedForSendingStatus {
		return bad(Fail, CheckMail, fmt.Sprintf("SES identity %s is not verified for sending (%s)", c.Identity, out.VerificationStatus), "finish the identity's verification (its DKIM records in DNS); SES refuses every send from it until then")
	}
	if out.DkimAttributes != nil && out.DkimAttributes.Status != "SUCCESS" {
		return bad(Warn, CheckMail, fmt.Sprintf("SES identity %s is verified; DKIM is %s", c.Identity, out.DkimAttributes.Status), "publish the identity's DKIM records: recipients' servers may refuse unsigned mail")
	}
	return ok(CheckMail, "SES identity %s is verified for sending; mail is sent as %s", c.Identity, c.From)
}
