// Package awserr is the one classifier of DynamoDB, SQS and S3 errors
// (store, outbox, queue, evidence, artifacts), by the service's error code
// (smithy.APIError), so throttling is RATE_LIMITED whichever package met it.
package awserr

import (
	"errors"
	"fmt"

	"github.com/criticizer/criticizer/shared/failure"
)

// ConditionFailed reports whether err is DynamoDB's ConditionalCheckFailed,
// which callers interpret (a refused conditional write), never classify.
func ConditionFailed(err error) bool { return Code(err) == "ConditionalCheckFailedException" }

// Code returns the service error code carried by err ("" when none).
func Code(err error) string {
	var ae interface{ ErrorCode() string }
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// Class returns the failure class of an AWS error.
func Class(err error) failure.Class {
	switch Code(err) {
	case "ProvisionedThroughputExceededException", "RequestLimitExceeded", "ThrottlingException", "Throttling",
		"RequestThrottled", "AWS.SimpleQueueService.RequestThrottled", "LimitExceededException",
		"SlowDown": // S3's 503 for a request rate over a prefix's (S3 User Guide, "Amazon S3 error best practices")
		return failure.RateLimited
	case "TransactionConflictException", "TransactionInProgressException":
		return failure.Conflict
	case "ValidationException", "SerializationException", "InvalidParameterValue", "InvalidParameterCombination",
		"MissingParameter", "ResourceNotFoundException", "AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist",
		"InvalidMessageContents", "ItemCollectionSizeLimitExceededException":
		// Our request or our configuration is wrong: a bug, not a retry.
		return failure.InternalBug
	case "ReceiptHandleIsInvalid", "MessageNotInflight", "AWS.SimpleQueueService.MessageNotInflight":
		return failure.LeaseLost // the message's visibility (our lease on it) is gone
	case "AccessDenied", "AccessDeniedException", "KMS.AccessDeniedException", "UnrecognizedClientException", "Forbidden":
		return failure.AuthDenied
	case "NoSuchKey": // S3: an artifact not (yet) written
		return failure.NotFound
	case "NoSuchBucket": // S3: our configuration names a bucket that is not there
		return failure.InternalBug
	}
	if c := failure.Classify(err); c == failure.NetworkTimeout {
		return c
	}
	return failure.Upstream5xx
}

// Wrap classifies err and wraps it with the operation's name.
func Wrap(op string, err error) error {
	return failure.Wrap(Class(err), fmt.Errorf("%s: %w", op, err))
}
