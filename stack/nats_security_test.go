package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// TestNATSSecurity walks issue #10's acceptance for NATS against `make run`'s stack and
// the credentials it generated: what the outside systems' events identity may and may not
// do, a service confined to its own slices, no stream deleted or purged but by the admin,
// no connection without credentials or without the CA, and neither cloud-init nor a Secret's
// value in the store files.
func TestNATSSecurity(t *testing.T) {
	s := startStack(t)
	_, admin := natsAs(t, s.natsURL, s.data, adminIdentity)
	marker := "vmop-cloudinit-" + randomHex(8)
	vm := events.Ref{Plural: "virtualmachines", Namespace: "my-namespace", Name: "secured-vm"}
	forged := events.Ref{Plural: "virtualmachines", Namespace: "my-namespace", Name: "forged-vm"}

	t.Run("the events credentials receive EVENTS by subscription and by a durable consumer of their own", func(t *testing.T) {
		nc, js := natsAs(t, s.natsURL, s.data, eventsIdentity)
		sub, err := nc.SubscribeSync("vmop.events.virtualmachines.>")
		if err != nil {
			t.Fatal(err)
		}
		s.applyVM(vm.Name, marker)
		created := events.EventSubject(vm, events.TypeVirtualMachineCreated)
		for {
			msg, err := sub.NextMsg(60 * time.Second)
			if err != nil {
				t.Fatalf("no %s event on the subscription: %v", created, err)
			}
			if msg.Subject == created {
				break
			}
		}

		cons, err := js.CreateOrUpdateConsumer(t.Context(), events.StreamEvents, jetstream.ConsumerConfig{
			Durable: "outside-system", FilterSubject: created, AckPolicy: jetstream.AckExplicitPolicy,
		})
		if err != nil {
			t.Fatalf("create a durable consumer on EVENTS: %v", err)
		}
		var got jetstream.Msg
		waitFor(t, time.Minute, "the created event through the durable consumer", func() bool {
			batch, err := cons.Fetch(1, jetstream.FetchMaxWait(time.Second))
			if err != nil {
				return false
			}
			for msg := range batch.Messages() {
				got = msg
			}
			return got != nil
		})
		if err := got.DoubleAck(t.Context()); err != nil {
			t.Fatalf("ack: %v", err)
		}
		if info, err := cons.Info(t.Context()); err != nil || info.AckFloor.Consumer != 1 {
			t.Errorf("consumer after the ack: %+v, %v; want the message acknowledged", info, err)
		}
	})

	t.Run("the events credentials cannot write SPECS or STATUS, read SPECS, nor delete a stream", func(t *testing.T) {
		nc, js, denied := natsWatched(t, s, eventsIdentity)
		for _, subj := range []string{events.SpecSubject(forged), events.StatusSubject(forged, model.ServicePlacement)} {
			if err := nc.Publish(subj, []byte(`{"forged":true}`)); err != nil {
				t.Fatal(err)
			}
			denied.wait(t, "Publish to \""+subj+"\"")
		}
		if _, err := events.LastSpec(t.Context(), admin, forged); !errors.Is(err, events.ErrNotFound) {
			t.Errorf("SPECS of %s after the events identity published: %v, want none", forged, err)
		}
		if _, err := events.LastStatus(t.Context(), admin, forged, model.ServicePlacement); !errors.Is(err, events.ErrNotFound) {
			t.Errorf("STATUS of %s after the events identity published: %v, want none", forged, err)
		}

		if _, err := nc.SubscribeSync(events.SpecFilter("")); err != nil {
			t.Fatal(err)
		}
		denied.wait(t, "Subscription to \""+events.SpecFilter("")+"\"")
		if _, err := js.Stream(shortContext(t), events.StreamSpecs); err == nil {
			t.Errorf("the events identity read SPECS' information")
		}
		denied.wait(t, "$JS.API.STREAM.INFO."+events.StreamSpecs)

		if err := js.DeleteStream(shortContext(t), events.StreamEvents); err == nil {
			t.Errorf("the events identity deleted EVENTS")
		}
		denied.wait(t, "$JS.API.STREAM.DELETE."+events.StreamEvents)
		if _, err := js.Stream(t.Context(), events.StreamEvents); err != nil {
			t.Errorf("EVENTS after the events identity tried to delete it: %v", err)
		}
	})

	t.Run("a service cannot publish another service's slice", func(t *testing.T) {
		nc, js, denied := natsWatched(t, s, model.ServicePlacement)
		other := events.StatusSubject(forged, model.ServicePower)
		if err := nc.Publish(other, []byte(`{"service":"power","uid":"forged"}`)); err != nil {
			t.Fatal(err)
		}
		denied.wait(t, "Publish to \""+other+"\"")
		if _, err := events.LastStatus(t.Context(), admin, forged, model.ServicePower); !errors.Is(err, events.ErrNotFound) {
			t.Errorf("power's slice of %s after placement published it: %v, want none", forged, err)
		}
		// Its own slice it may publish.
		if _, err := events.PublishStatus(t.Context(), js, forged, events.Slice{Service: model.ServicePlacement, UID: "forged"}); err != nil {
			t.Errorf("placement publishing its own slice: %v", err)
		}
		if err := events.PurgeStatus(t.Context(), admin, forged); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("only the admin deletes or purges a stream", func(t *testing.T) {
		before, err := admin.Stream(t.Context(), events.StreamSpecs)
		if err != nil {
			t.Fatal(err)
		}
		for identity := range roleIdentities() {
			_, js, denied := natsWatched(t, s, identity)
			st, err := js.Stream(t.Context(), events.StreamSpecs)
			if err != nil {
				t.Fatalf("%s reading SPECS' information: %v", identity, err)
			}
			if err := st.Purge(shortContext(t)); err == nil {
				t.Errorf("%s purged SPECS", identity)
			}
			denied.wait(t, "$JS.API.STREAM.PURGE."+events.StreamSpecs)
			if err := js.DeleteStream(shortContext(t), events.StreamSpecs); err == nil {
				t.Errorf("%s deleted SPECS", identity)
			}
			denied.wait(t, "$JS.API.STREAM.DELETE."+events.StreamSpecs)
		}
		after, err := admin.Stream(t.Context(), events.StreamSpecs)
		if err != nil || after.CachedInfo().State.Msgs < before.CachedInfo().State.Msgs {
			t.Errorf("SPECS after the attempts: %v; had %d messages", err, before.CachedInfo().State.Msgs)
		}
		scratch := jetstream.StreamConfig{Name: "SCRATCH", Subjects: []string{"scratch.>"}, Storage: jetstream.MemoryStorage}
		if _, err := admin.CreateStream(t.Context(), scratch); err != nil {
			t.Fatalf("admin creating a stream: %v", err)
		}
		if err := admin.DeleteStream(t.Context(), scratch.Name); err != nil {
			t.Errorf("admin deleting a stream: %v", err)
		}
	})

	t.Run("no connection without credentials", func(t *testing.T) {
		nc, err := nats.Connect(s.natsURL, nats.RootCAs(filepath.Join(s.data, "nats", "ca.crt")))
		if err == nil {
			nc.Close()
			t.Fatal("connected without credentials")
		}
		if !errors.Is(err, nats.ErrAuthorization) {
			t.Errorf("connect without credentials: %v, want an authorization violation", err)
		}
	})

	t.Run("no connection without the CA, and no connection but TLS", func(t *testing.T) {
		nc, err := nats.Connect(s.natsURL, nats.UserCredentials(filepath.Join(s.data, "nats", eventsIdentity+".creds")))
		if err == nil {
			nc.Close()
			t.Fatal("connected without the CA")
		}
		if !strings.Contains(err.Error(), "certificate signed by unknown authority") {
			t.Errorf("connect without the CA: %v, want the certificate refused", err)
		}
		conn, err := net.DialTimeout("tcp", strings.TrimPrefix(s.natsURL, "nats://"), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		info, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil || !strings.Contains(info, `"tls_required":true`) {
			t.Errorf("the server's INFO: %q, %v; want tls_required", info, err)
		}
	})

	t.Run("keys and credentials are readable by their owner only", func(t *testing.T) {
		dir := filepath.Join(s.data, "nats")
		if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want mode 0700", dir, st.Mode(), err)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		secrets := 0
		for _, f := range files {
			if ext := filepath.Ext(f); ext != ".creds" && ext != ".nk" && ext != ".key" {
				continue
			}
			secrets++
			if st, err := os.Stat(f); err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("%s: %v, %v; want mode 0600", f, st.Mode(), err)
			}
		}
		if want := len(roleIdentities()) + 2 + 4 + 1; secrets != want { // parts, admin, events; operator and accounts; store key
			t.Errorf("%d key and credential files in %s, want %d", secrets, dir, want)
		}
	})

	t.Run("the JetStream store files hold no cloud-init content nor Secret value", func(t *testing.T) {
		s.applyVM(vm.Name, marker) // unchanged when the first subtest ran
		secretValue := "vmop-secret-" + randomHex(8)
		secretDoc := "apiVersion: v1\nkind: Secret\nmetadata:\n  name: store-scan\n  namespace: my-namespace\nstringData:\n  password: " + secretValue + "\n"
		if out, err := s.kubectlCtx(t.Context(), []byte(secretDoc), "apply", "-f", "-"); err != nil {
			t.Fatalf("apply the Secret: %v\n%s", err, out)
		}
		secret := events.Ref{Plural: "secrets", Namespace: "my-namespace", Name: "store-scan"}
		var rec, secretRec events.SpecRecord
		waitFor(t, time.Minute, "the VM and the Secret in SPECS", func() bool {
			var err, serr error
			rec, err = events.LastSpec(t.Context(), admin, vm)
			secretRec, serr = events.LastSpec(t.Context(), admin, secret)
			return err == nil && serr == nil
		})
		if !bytes.Contains(rec.Body, []byte(marker)) {
			t.Fatalf("the VM's spec lacks its cloud-init: %s", rec.Body)
		}
		// Secret data is stored base64-encoded, as in Kubernetes: scan for that form too.
		encodedValue := base64.StdEncoding.EncodeToString([]byte(secretValue))
		if !bytes.Contains(secretRec.Body, []byte(encodedValue)) {
			t.Fatalf("the Secret's record lacks its value: %s", secretRec.Body)
		}
		// The store has the record on disk once its message blocks are at least as long.
		blocks := filepath.Join(s.data, "nats", "jetstream", "*", "streams", events.StreamSpecs, "msgs", "*.blk")
		waitFor(t, time.Minute, "SPECS' message blocks written", func() bool {
			files, _ := filepath.Glob(blocks)
			var size int64
			for _, f := range files {
				if st, err := os.Stat(f); err == nil {
					size += st.Size()
				}
			}
			return size >= int64(len(rec.Body))
		})
		scanned := 0
		err := filepath.WalkDir(filepath.Join(s.data, "nats", "jetstream"), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if errors.Is(err, fs.ErrNotExist) {
				return nil // a block compacted meanwhile
			}
			if err != nil {
				return err
			}
			scanned++
			if bytes.Contains(data, []byte(marker)) {
				t.Errorf("%s holds the cloud-init content in clear", path)
			}
			if bytes.Contains(data, []byte(secretValue)) || bytes.Contains(data, []byte(encodedValue)) {
				t.Errorf("%s holds the Secret's value in clear", path)
			}
			return nil
		})
		if err != nil || scanned == 0 {
			t.Fatalf("scan the store: %v (%d files)", err, scanned)
		}
	})
}

// applyVM creates or updates a VM whose inline cloud-init carries marker.
func (s *stack) applyVM(name, marker string) {
	s.t.Helper()
	doc := `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata:
  name: ` + name + `
  namespace: my-namespace
spec:
  className: my-vm-class
  imageName: vmi-0a0044d7c690bcbea
  storageClass: my-storage-class
  bootstrap:
    cloudInit:
      cloudConfig:
        runcmd:
        - "echo ` + marker + `"
        write_files:
        - path: /etc/vmop-marker
          content: "` + marker + `"
`
	if out, err := s.kubectlCtx(s.t.Context(), []byte(doc), "apply", "-f", "-"); err != nil {
		s.t.Fatalf("apply %s: %v\n%s", name, err, out)
	}
}

// shortContext bounds a request the server will not answer (it refuses its subject).
func shortContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// deniedLog collects the permission violations the server reports to a connection.
type deniedLog struct {
	mu   sync.Mutex
	errs []string
}

// natsWatched connects as identity and records the permission violations it meets.
func natsWatched(t *testing.T, s *stack, identity string) (*nats.Conn, jetstream.JetStream, *deniedLog) {
	d := &deniedLog{}
	nc, js := natsAs(t, s.natsURL, s.data, identity, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.errs = append(d.errs, err.Error())
	}))
	return nc, js, d
}

// wait waits until the server reported a permissions violation naming what.
func (d *deniedLog) wait(t *testing.T, what string) {
	t.Helper()
	waitFor(t, time.Minute, "a permissions violation for "+what, func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		for _, e := range d.errs {
			if strings.Contains(e, "ermissions violation") && strings.Contains(e, what) {
				return true
			}
		}
		return false
	})
}
