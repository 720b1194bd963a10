package artifacts

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// MemoryBucket is an in-memory bucket with S3's NoSuchKey behaviour, for fast
// tests and benchmarks of the stages (the emulator tests use the real API).
type MemoryBucket struct {
	mu      sync.Mutex
	objects map[string][]byte
}

// NewMemoryBucket returns an empty MemoryBucket.
func NewMemoryBucket() *MemoryBucket { return &MemoryBucket{objects: map[string][]byte{}} }

// PutObject stores the body under the key.
func (m *MemoryBucket) PutObject(_ context.Context, in *s3.PutObjectInput, _ ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	b, err := io.ReadAll(in.Body)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.objects[*in.Key] = b
	return &s3.PutObjectOutput{}, nil
}

// GetObject returns the object, or *types.NoSuchKey.
func (m *MemoryBucket) GetObject(_ context.Context, in *s3.GetObjectInput, _ ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.objects[*in.Key]
	if !ok {
		return nil, &s3types.NoSuchKey{}
	}
	return &s3.GetObjectOutput{Body: io.NopCloser(bytes.NewReader(b))}, nil
}

// Put stores b under key directly (test set-up).
func (m *MemoryBucket) Put(key string, b []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.objects[key] = b
}

// Get returns the object under key and whether it exists.
func (m *MemoryBucket) Get(key string) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.objects[key]
	return b, ok
}

// Keys lists the stored keys that contain substr, sorted.
func (m *MemoryBucket) Keys(substr string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for k := range m.objects {
		if strings.Contains(k, substr) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
