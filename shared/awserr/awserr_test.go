package awserr

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/criticizer/criticizer/shared/failure"
)

func TestClass(t *testing.T) {
	api := func(code string) error { return fmt.Errorf("op: %w", &smithy.GenericAPIError{Code: code}) }
	tests := []struct {
		err  error
		want failure.Class
	}{
		{api("ProvisionedThroughputExceededException"), failure.RateLimited},
		{api("ThrottlingException"), failure.RateLimited},
		{api("RequestLimitExceeded"), failure.RateLimited},
		{api("RequestThrottled"), failure.RateLimited}, // SQS
		{api("TransactionConflictException"), failure.Conflict},
		{api("ValidationException"), failure.InternalBug},
		{api("AWS.SimpleQueueService.NonExistentQueue"), failure.InternalBug},
		{api("ReceiptHandleIsInvalid"), failure.LeaseLost},
		{api("AccessDeniedException"), failure.AuthDenied},
		{api("InternalServerError"), failure.Upstream5xx},
		// S3, as the SDK types them (artifacts).
		{fmt.Errorf("get: %w", &types.NoSuchKey{}), failure.NotFound},
		{fmt.Errorf("put: %w", &types.NoSuchBucket{}), failure.InternalBug},
		{api("AccessDenied"), failure.AuthDenied},
		{api("Forbidden"), failure.AuthDenied},
		{api("SlowDown"), failure.RateLimited},
		{api("InternalError"), failure.Upstream5xx},
		{context.DeadlineExceeded, failure.NetworkTimeout},
	}
	for _, tt := range tests {
		if got := Class(tt.err); got != tt.want {
			t.Errorf("%v: %s, want %s", tt.err, got, tt.want)
		}
	}
	if !ConditionFailed(api("ConditionalCheckFailedException")) || ConditionFailed(errors.New("x")) {
		t.Error("ConditionFailed")
	}
	if err := Wrap("get job", api("ThrottlingException")); failure.Classify(err) != failure.RateLimited {
		t.Errorf("Wrap: %v", err)
	}
}
