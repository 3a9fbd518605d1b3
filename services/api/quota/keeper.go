package quota

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/services/api/readmodel"
)

// service names the status slice the keeper publishes for each ResourceQuota.
const service = "quota"

// retryDelay is how long a namespace whose quotas could not be reported waits to be tried again.
const retryDelay = time.Second

// Objects is the read model as the keeper follows it.
type Objects interface {
	Reader
	Watch(ctx context.Context, o readmodel.WatchOptions) (<-chan readmodel.Change, error)
}

// charging are the kinds whose changes change a namespace's quota use, and the quotas.
var charging = []string{"resourcequotas", "virtualmachines", "persistentvolumeclaims"}

// keeper keeps each ResourceQuota's status (hard: its limits, used: what the namespace's
// VMs and claims charge) current, as Kubernetes' quota controller does: a change of a
// quota, a VM or a claim marks its namespace, whose quotas are then computed again and
// published when they changed. Gateway replicas publish the same slice; STATUS keeps one.
type keeper struct {
	js  jetstream.JetStream
	rm  Objects
	log *slog.Logger

	mu    sync.Mutex
	dirty map[string]bool // namespaces to compute again
	wake  chan struct{}   // a namespace was marked
}

// Start keeps the quotas' status until ctx ends.
func Start(ctx context.Context, js jetstream.JetStream, rm Objects, log *slog.Logger) {
	k := &keeper{js: js, rm: rm, log: log, dirty: map[string]bool{}, wake: make(chan struct{}, 1)}
	for _, plural := range charging {
		go k.follow(ctx, plural)
	}
	go k.run(ctx)
}

// follow marks the namespace of every change of a kind; it re-watches when the read model
// drops a slow watcher, starting with the current objects so no change is missed.
func (k *keeper) follow(ctx context.Context, plural string) {
	for ctx.Err() == nil {
		changes, err := k.rm.Watch(ctx, readmodel.WatchOptions{Plural: plural, SendInitial: true})
		if err != nil {
			if ctx.Err() == nil {
				k.log.Error("quota keeper watch", "resource", plural, "err", err)
			}
			return
		}
		for ch := range changes {
			var head struct {
				Metadata struct{ Namespace string }
			}
			if json.Unmarshal(ch.Object, &head) == nil && head.Metadata.Namespace != "" {
				k.mark(head.Metadata.Namespace)
			}
		}
	}
}

func (k *keeper) mark(ns string) {
	k.mu.Lock()
	k.dirty[ns] = true
	k.mu.Unlock()
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// run computes the marked namespaces again, one at a time.
func (k *keeper) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-k.wake:
		}
		k.mu.Lock()
		dirty := k.dirty
		k.dirty = map[string]bool{}
		k.mu.Unlock()
		for ns := range dirty {
			if err := k.report(ctx, ns); err != nil && ctx.Err() == nil {
				k.log.Error("quota use not reported; retrying", "namespace", ns, "err", err, "in", retryDelay)
				time.AfterFunc(retryDelay, func() { k.mark(ns) })
			}
		}
	}
}

// report publishes the status of every quota of ns whose status differs from its limits
// and use. The read model's status is compared, not what this gateway published last, so a
// replica that published an older use is corrected.
func (k *keeper) report(ctx context.Context, ns string) error {
	u, err := Read(k.rm, ns)
	if err != nil {
		return err
	}
	for _, q := range u.Quotas {
		want := model.ResourceQuotaStatus{Hard: q.Spec.Hard, Used: u.Used(q)}
		if sameQuantities(q.Status.Hard, want.Hard) && sameQuantities(q.Status.Used, want.Used) {
			continue // also how the keeper's own publish comes back through the watch
		}
		status, err := json.Marshal(want)
		if err != nil {
			return fmt.Errorf("encode status of quota %s: %w", q.Name, err)
		}
		ref := events.Ref{Plural: "resourcequotas", Namespace: ns, Name: q.Name}
		slice := events.Slice{Service: service, UID: string(q.UID), Generation: q.Generation, Status: status}
		if _, err := events.PublishStatus(ctx, k.js, ref, slice); err != nil {
			return err
		}
	}
	return nil
}

func sameQuantities(a, b model.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, q := range a {
		if other, ok := b[name]; !ok || q.Cmp(other) != 0 {
			return false
		}
	}
	return true
}
