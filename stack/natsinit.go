package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
)

// runNATSInit is role nats-init: it writes what the nodes of a NATS cluster share
// (ensureNATSSecrets, and the route secret) into $VMOP_DATA and exits, so that the nodes
// start from one set instead of racing to create it. With VMOP_NATS_EXPORT it also
// copies each identity's credentials (nats.creds) and the CA (ca.crt) into
// <export>/<identity>/ where that directory exists: compose mounts one volume per
// identity there, so that a container receives its own credentials only.
func runNATSInit(_ context.Context, c config) error {
	auth, _, err := ensureNATSSecrets(c.Data)
	if err != nil {
		return err
	}
	dir := filepath.Join(c.Data, "nats")
	if _, err := ensureRouteSecret(filepath.Join(dir, "route.secret")); err != nil {
		return err
	}
	if c.NATSExport == "" {
		return nil
	}
	ca, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return fmt.Errorf("read CA: %w", err)
	}
	for _, id := range exportableIdentities() {
		to := filepath.Join(c.NATSExport, id)
		if _, err := os.Stat(to); err != nil {
			continue // not asked for
		}
		creds, err := os.ReadFile(auth.credsFile(id))
		if err != nil {
			return fmt.Errorf("%s credentials: %w", id, err)
		}
		if err := writeSecret(filepath.Join(to, "nats.creds"), creds); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, "ca.crt"), ca, 0o644); err != nil {
			return fmt.Errorf("export CA: %w", err)
		}
		slog.Info("exported NATS credentials", "identity", id, "to", to)
	}
	return nil
}

// exportableIdentities are the identities nats-init may hand out: every part's, the
// outside systems' and the operators'.
func exportableIdentities() []string {
	ids := []string{adminIdentity, eventsIdentity}
	for id := range roleIdentities() {
		ids = append(ids, id)
	}
	return ids
}
