package artifacts

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/criticizer/criticizer/shared/config"
)

// NewS3Client returns the S3 client for the artifact buckets, with path-style
// addressing when an emulator endpoint is set (emulators are reached by IP).
func NewS3Client(cfg aws.Config) *s3.Client {
	return s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = config.UsePathStyleS3() })
}
