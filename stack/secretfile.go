package main

import (
	"fmt"
	"os"
)

// writeSecret replaces file with data, readable by its owner only, in one rename, so a
// reader never sees half a file (keys, credentials, tokens, the kubeconfig).
func writeSecret(file string, data []byte) error {
	tmp := file + ".tmp"
	_ = os.Remove(tmp) // a leftover would keep its mode
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	if err := os.Rename(tmp, file); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	return nil
}
