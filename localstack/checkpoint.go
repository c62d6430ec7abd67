package localstack

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Checkpoints remembers, per stream shard, the sequence number of the last
// record a StreamPump has handled, as Lambda's event source mapping does, so
// that a pump restarted against the same stream resumes after it instead of
// skipping what was written while it was down.
type Checkpoints interface {
	// Load returns the checkpoint of a shard of a stream; ok is false when
	// there is none.
	Load(streamARN, shardID string) (seq string, ok bool)
	// Save records that every record of the shard up to seq was handled.
	Save(streamARN, shardID, seq string) error
}

// FileCheckpoints keeps checkpoints in a JSON file, rewritten atomically
// (temp file and rename) on every Save. It is safe for concurrent use.
type FileCheckpoints struct {
	path string
	mu   sync.Mutex
	// seqs maps stream ARN -> shard id -> sequence number.
	seqs map[string]map[string]string
}

// OpenFileCheckpoints reads the checkpoints kept in path; a missing file
// holds none.
func OpenFileCheckpoints(path string) (*FileCheckpoints, error) {
	c := &FileCheckpoints{path: path, seqs: map[string]map[string]string{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("stream checkpoints: %w", err)
	}
	if err := json.Unmarshal(data, &c.seqs); err != nil {
		return nil, fmt.Errorf("stream checkpoints %s: %w", path, err)
	}
	if c.seqs == nil {
		c.seqs = map[string]map[string]string{}
	}
	return c, nil
}

// Load implements Checkpoints.
func (c *FileCheckpoints) Load(streamARN, shardID string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	seq, ok := c.seqs[streamARN][shardID]
	return seq, ok
}

// Save implements Checkpoints.
func (c *FileCheckpoints) Save(streamARN, shardID, seq string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seqs[streamARN][shardID] == seq {
		return nil
	}
	if c.seqs[streamARN] == nil {
		c.seqs[streamARN] = map[string]string{}
	}
	c.seqs[streamARN][shardID] = seq
	data, err := json.Marshal(c.seqs)
	if err != nil {
		return fmt.Errorf("stream checkpoints: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
		return fmt.Errorf("stream checkpoints: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.path), ".checkpoints-*")
	if err != nil {
		return fmt.Errorf("stream checkpoints: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("stream checkpoints: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("stream checkpoints: %w", err)
	}
	if err := os.Rename(tmp.Name(), c.path); err != nil {
		return fmt.Errorf("stream checkpoints: %w", err)
	}
	return nil
}
