package events_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
)

// TestPermissions runs a server whose users have the identities' permissions and checks
// that each does its work and no more.
func TestPermissions(t *testing.T) {
	t.Parallel()
	placement := events.ServiceAccess{Service: "placement", Consumers: []string{events.Durable("placement")}, Specs: []string{"virtualmachines"}}
	power := events.ServiceAccess{Service: "power", Consumers: []string{events.Durable("power")}}
	ids := map[string]events.Permissions{
		"admin":     {},
		"placement": placement.Permissions(),
		"power":     power.Permissions(),
		"api":       events.GatewayPermissions(placement, power),
	}
	srv := permissionServer(t, ids)
	ctx := testContext(t)
	admin := connectAs(t, srv, "admin", ids)
	if err := events.Setup(ctx, admin); err != nil {
		t.Fatal(err)
	}
	vm := events.Ref{Plural: "virtualmachines", Namespace: "default", Name: "vm"}
	class := events.Ref{Plural: "virtualmachineclasses", Namespace: "default", Name: "small"}

	api := connectAs(t, srv, "api", ids)
	if _, err := events.AppendSpec(ctx, api, vm, events.OpPut, []byte(`{}`), 0, nil); err != nil {
		t.Errorf("the gateway appending a spec: %v", err)
	}
	if err := events.PublishEvent(ctx, api, vm, events.TypeVirtualMachineCreated, "u/created", struct{}{}); err != nil {
		t.Errorf("the gateway announcing an event: %v", err)
	}
	if err := followEvents(ctx, api); err != nil {
		t.Errorf("the gateway following EVENTS (served as Kubernetes Events): %v", err)
	}
	pl := connectAs(t, srv, "placement", ids)
	if _, err := events.PublishStatus(ctx, pl, vm, events.Slice{Service: "placement", UID: "u"}); err != nil {
		t.Errorf("placement publishing its slice: %v", err)
	}
	if _, err := events.LastSpec(ctx, pl, vm); err != nil {
		t.Errorf("placement reading a spec: %v", err)
	}
	if _, err := events.AppendSpec(ctx, pl, vm, events.OpPut, []byte(`{"zone":1}`), 1, nil); err != nil {
		t.Errorf("placement appending to a VM's spec: %v", err)
	}
	if _, err := pl.CreateOrUpdateConsumer(ctx, events.StreamSpecs, jetstream.ConsumerConfig{Durable: events.Durable("placement")}); err != nil {
		t.Errorf("placement creating its consumer: %v", err)
	}

	refused := []struct {
		what string
		do   func(context.Context) error
	}{
		{"placement publishing power's slice", func(ctx context.Context) error {
			_, err := events.PublishStatus(ctx, pl, vm, events.Slice{Service: "power", UID: "u"})
			return err
		}},
		{"placement appending to a class's spec", func(ctx context.Context) error {
			_, err := events.AppendSpec(ctx, pl, class, events.OpPut, []byte(`{}`), 0, nil)
			return err
		}},
		{"placement creating power's consumer", func(ctx context.Context) error {
			_, err := pl.CreateOrUpdateConsumer(ctx, events.StreamSpecs, jetstream.ConsumerConfig{Durable: events.Durable("power")})
			return err
		}},
		{"the gateway changing placement's consumer", func(ctx context.Context) error {
			_, err := api.CreateOrUpdateConsumer(ctx, events.StreamSpecs, jetstream.ConsumerConfig{Durable: events.Durable("placement")})
			return err
		}},
		{"the gateway deleting placement's consumer", func(ctx context.Context) error {
			return api.DeleteConsumer(ctx, events.StreamSpecs, events.Durable("placement"))
		}},
		{"the gateway reading placement's consumer", func(ctx context.Context) error {
			_, err := api.Consumer(ctx, events.StreamSpecs, events.Durable("placement"))
			return err
		}},
		{"the gateway pulling from placement's consumer", func(ctx context.Context) error {
			// Allowed, an empty consumer would answer at once (404 No Messages).
			_, err := api.Conn().RequestWithContext(ctx, "$JS.API.CONSUMER.MSG.NEXT."+events.StreamSpecs+"."+events.Durable("placement"), []byte(`{"batch":1,"no_wait":true}`))
			return err
		}},
		{"the gateway purging STATUS", func(ctx context.Context) error {
			st, err := api.Stream(ctx, events.StreamStatus)
			if err == nil {
				err = st.Purge(ctx)
			}
			return err
		}},
		{"placement deleting SPECS", func(ctx context.Context) error { return pl.DeleteStream(ctx, events.StreamSpecs) }},
	}
	for _, r := range refused {
		short, cancel := context.WithTimeout(ctx, 2*time.Second)
		if err := r.do(short); err == nil {
			t.Errorf("%s: allowed", r.what)
		}
		cancel()
	}
	if _, err := admin.Consumer(ctx, events.StreamSpecs, events.Durable("placement")); err != nil {
		t.Errorf("placement's consumer after the gateway's attempts: %v", err)
	}
	if _, err := events.LastStatus(ctx, admin, vm, "power"); !errors.Is(err, events.ErrNotFound) {
		t.Errorf("power's slice after placement published it: %v, want none", err)
	}

	// The gateway removes a finalized object's slices without the right to purge.
	if err := events.PurgeStatus(ctx, api, vm); err != nil {
		t.Errorf("the gateway removing a VM's slices: %v", err)
	}
	if _, err := events.LastStatus(ctx, admin, vm, "placement"); !errors.Is(err, events.ErrNotFound) {
		t.Errorf("placement's slice after PurgeStatus: %v, want none", err)
	}
}

// permissionServer runs a NATS server with one user per identity (named so, password
// "pw") holding its permissions.
func permissionServer(t *testing.T, ids map[string]events.Permissions) *server.Server {
	t.Helper()
	var users []*server.User
	for name, p := range ids {
		u := &server.User{Username: name, Password: "pw"}
		if len(p.Publish) > 0 {
			u.Permissions = &server.Permissions{
				Publish:   &server.SubjectPermission{Allow: p.Publish, Deny: p.DenyPublish},
				Subscribe: &server.SubjectPermission{Allow: p.Subscribe, Deny: p.DenySubscribe},
			}
		}
		users = append(users, u)
	}
	srv, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true, Users: users,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	return srv
}

func connectAs(t *testing.T, srv *server.Server, name string, ids map[string]events.Permissions) jetstream.JetStream {
	t.Helper()
	opts := []nats.Option{nats.UserInfo(name, "pw")}
	if inbox := ids[name].Inbox; inbox != "" {
		opts = append(opts, nats.CustomInboxPrefix(inbox))
	}
	nc, err := nats.Connect(srv.ClientURL(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// followEvents reads the first EVENTS message with an ordered consumer, as the gateway's
// Kubernetes Events fold does.
func followEvents(ctx context.Context, js jetstream.JetStream) error {
	cons, err := js.OrderedConsumer(ctx, events.StreamEvents, jetstream.OrderedConsumerConfig{FilterSubjects: []string{events.EventFilter()}})
	if err != nil {
		return err
	}
	_, err = cons.Next(jetstream.FetchMaxWait(5 * time.Second))
	return err
}
