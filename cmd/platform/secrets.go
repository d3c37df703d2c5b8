package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// readOrCreateSecret returns the secret stored at path, creating it with 32
// random bytes (hex, after prefix; base64 after whsec_) when the file does
// not exist yet.
func readOrCreateSecret(path, prefix string) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		if s := strings.TrimSpace(string(b)); s != "" {
			return s, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("generate secret: %w", err)
	}
	s := prefix + hex.EncodeToString(raw)
	if prefix == "whsec_" {
		// Standard Webhooks secrets are base64 after the prefix.
		s = prefix + base64.StdEncoding.EncodeToString(raw)
	}
	if err := os.WriteFile(path, []byte(s+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return s, nil
}
