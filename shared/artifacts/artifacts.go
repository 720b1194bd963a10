// Package artifacts owns review artifacts in S3: raw changesets in the raw
// bucket (short TTL, restricted), everything derived from redacted input in
// the redacted bucket. Keys are deterministic per job: a retry overwrites.
package artifacts

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/criticizer/criticizer/shared/awserr"
	"github.com/criticizer/criticizer/shared/failure"
)

// API is the part of the S3 client the package uses.
type API interface {
	PutObject(context.Context, *s3.PutObjectInput, ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	GetObject(context.Context, *s3.GetObjectInput, ...func(*s3.Options)) (*s3.GetObjectOutput, error)
}

// Store writes and reads JSON artifacts in one bucket.
type Store struct {
	api    API
	bucket string
}

// New returns a Store for bucket.
func New(api API, bucket string) *Store { return &Store{api: api, bucket: bucket} }

// Bucket names the bucket this store writes to.
func (s *Store) Bucket() string { return s.bucket }

// Key builds the artifact key for a job.
func Key(jobID, name string) string { return "jobs/" + jobID + "/" + name }

// PutJSON stores v as JSON at key, encrypted at rest.
func (s *Store) PutJSON(ctx context.Context, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return failure.Wrap(failure.InternalBug, fmt.Errorf("encode artifact %s: %w", key, err))
	}
	return s.PutReader(ctx, key, bytes.NewReader(b))
}

// PutReader stores the JSON document body (seekable, to sign and retry) at
// key, encrypted at rest.
func (s *Store) PutReader(ctx context.Context, key string, body io.ReadSeeker) error {
	size, err := body.Seek(0, io.SeekEnd)
	if err == nil {
		_, err = body.Seek(0, io.SeekStart)
	}
	if err != nil {
		return failure.Wrap(failure.InternalBug, fmt.Errorf("artifact %s: %w", key, err))
	}
	_, err = s.api.PutObject(ctx, &s3.PutObjectInput{
		Bucket: &s.bucket, Key: &key, Body: body, ContentLength: aws.Int64(size), ContentType: aws.String("application/json"),
		ServerSideEncryption: types.ServerSideEncryptionAes256,
	})
	if err != nil {
		return awserr.Wrap(fmt.Sprintf("put s3://%s/%s", s.bucket, key), err)
	}
	return nil
}

// GetJSON reads the JSON artifact at key into v.
func (s *Store) GetJSON(ctx context.Context, key string, v any) error {
	out, err := s.api.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return awserr.Wrap(fmt.Sprintf("get s3://%s/%s", s.bucket, key), err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		return awserr.Wrap(fmt.Sprintf("read s3://%s/%s", s.bucket, key), err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return failure.Wrap(failure.SchemaInvalid, fmt.Errorf("decode artifact %s: %w", key, err))
	}
	return nil
}
