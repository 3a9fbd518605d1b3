package network

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// pluralSecrets is the kind a bootstrap takes its secret values from; a change of one
// re-reconciles the VMs of its namespace (a bootstrap waiting for it proceeds).
const pluralSecrets = "secrets"

// missingSecret: the bootstrap names a Secret or key that does not exist (yet). Its
// message names them, never a value.
type missingSecret struct{ msg string }

func (e missingSecret) Error() string { return e.msg }

func isMissingSecret(err error) bool { return errors.As(err, new(missingSecret)) }

// secrets reads the Secrets of one namespace from SPECS, each once per reconcile.
type secrets struct {
	ctx       context.Context
	js        jetstream.JetStream
	namespace string
	read      map[string]map[string][]byte // name → data; nil data: absent
}

func newSecrets(ctx context.Context, js jetstream.JetStream, namespace string) *secrets {
	return &secrets{ctx: ctx, js: js, namespace: namespace, read: map[string]map[string][]byte{}}
}

// data is the named Secret's data; a missingSecret when it does not exist.
func (s *secrets) data(name string) (map[string][]byte, error) {
	if d, ok := s.read[name]; ok {
		if d == nil {
			return nil, missingSecret{fmt.Sprintf("secret %q not found", name)}
		}
		return d, nil
	}
	rec, err := events.LastSpec(s.ctx, s.js, events.Ref{Plural: pluralSecrets, Namespace: s.namespace, Name: name})
	if errors.Is(err, events.ErrNotFound) || (err == nil && rec.Op == events.OpDelete) {
		s.read[name] = nil
		return nil, missingSecret{fmt.Sprintf("secret %q not found", name)}
	}
	if err != nil {
		return nil, fmt.Errorf("read secret %s: %w", name, err)
	}
	var sec model.Secret
	if err := json.Unmarshal(rec.Body, &sec); err != nil {
		return nil, fmt.Errorf("decode secret %s: %w", name, err)
	}
	if sec.Data == nil {
		sec.Data = map[string][]byte{}
	}
	s.read[name] = sec.Data
	return sec.Data, nil
}

// value is one key of the named Secret, trying the fallback keys in order after key.
func (s *secrets) value(name, key string, fallbacks ...string) (string, error) {
	d, err := s.data(name)
	if err != nil {
		return "", err
	}
	for _, k := range append([]string{key}, fallbacks...) {
		if v, ok := d[k]; ok && k != "" {
			return string(v), nil
		}
	}
	return "", missingSecret{fmt.Sprintf("key %q not found in secret %q", key, name)}
}
