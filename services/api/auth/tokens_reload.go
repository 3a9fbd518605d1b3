package auth

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"
)

// tokensPollInterval is how often the tokens file is read for changes: reading a small
// file is cheap, and unlike file notifications it sees every way the file is replaced
// (an editor's rename, a mounted Secret's symlink swap).
const tokensPollInterval = 2 * time.Second

// LoadTokensFile reads the tokens file at start, returning its content too (what
// ReloadTokens compares with); a file that cannot be used stops the gateway with the reason.
func LoadTokensFile(path string) (TokensFile, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return TokensFile{}, nil, fmt.Errorf("read tokens file: %w", err)
	}
	tf, err := ParseTokens(data)
	if err != nil {
		return TokensFile{}, nil, fmt.Errorf("tokens file %s: %w", path, err)
	}
	return tf, data, nil
}

// ReloadTokens replaces the users whenever the file's content changes, without a
// restart. A changed file that is refused (a duplicate, a plain token, bad YAML) leaves
// the previous users in place and is logged, as is a file that cannot be read.
func (a *Authenticator) ReloadTokens(ctx context.Context, path string, loaded []byte, log *slog.Logger) {
	last, lastErr := loaded, ""
	tick := time.NewTicker(tokensPollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		data, err := os.ReadFile(path)
		if err == nil && bytes.Equal(data, last) {
			continue
		}
		var tf TokensFile
		if err == nil {
			last = data
			tf, err = ParseTokens(data)
		}
		if err != nil {
			if err.Error() != lastErr {
				log.Error("tokens file not reloaded: the previous users stay", "path", path, "err", err)
				lastErr = err.Error()
			}
			continue
		}
		a.set(tf)
		lastErr = ""
		log.Info("tokens file reloaded", "path", path, "users", len(tf.Users))
	}
}
