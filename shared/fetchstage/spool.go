package fetchstage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/criticizer/criticizer/shared/domain"
)

// spool keeps a changeset artifact's files on local disk as they arrive (any
// order, concurrently) and writes the artifact in changeset order at the
// end: memory holds one file, disk the changelist twice at most.
type spool struct {
	mu    sync.Mutex
	f     *os.File
	size  int64
	parts map[int]section // by index into Changeset.Files
}

type section struct{ off, n int64 }

func newSpool(dir string) (*spool, error) {
	f, err := os.CreateTemp(dir, "criticizer-spool-*")
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	return &spool{f: f, parts: map[int]section{}}, nil
}

// add keeps file i's JSON encoding; the last one added for an index wins.
func (s *spool) add(i int, fc domain.FileChange) error {
	b, err := json.Marshal(fc)
	if err != nil {
		return fmt.Errorf("spool: encode %s: %w", fc.DepotPath, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.f.WriteAt(b, s.size); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	s.parts[i] = section{s.size, int64(len(b))}
	s.size += int64(len(b))
	return nil
}

// writeArtifact writes what json.Marshal(cs) would, each added file's Diff
// taken from the spool.
func (s *spool) writeArtifact(w io.Writer, cs domain.Changeset) error {
	files := cs.Files
	cs.Files = []domain.FileChange{}
	head, err := json.Marshal(cs)
	if err != nil {
		return fmt.Errorf("spool: encode changeset: %w", err)
	}
	// Files is the struct's last field: its empty array closes the object.
	const tail = `[]}`
	if !bytes.HasSuffix(head, []byte(`"files":`+tail)) {
		return errors.New("spool: the changeset's JSON does not end with its files")
	}
	if _, err := w.Write(head[:len(head)-len(tail)+1]); err != nil {
		return err
	}
	for i, fc := range files {
		if i > 0 {
			if _, err := io.WriteString(w, ","); err != nil {
				return err
			}
		}
		if p, ok := s.parts[i]; ok {
			if _, err := io.Copy(w, io.NewSectionReader(s.f, p.off, p.n)); err != nil {
				return fmt.Errorf("spool: %w", err)
			}
			continue
		}
		b, err := json.Marshal(fc)
		if err != nil {
			return fmt.Errorf("spool: encode %s: %w", fc.DepotPath, err)
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	_, err = io.WriteString(w, tail[1:])
	return err
}

// close removes the spool file.
func (s *spool) close() {
	s.f.Close()
	os.Remove(s.f.Name())
}
