package reconcile

import (
	"bytes"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
)

// A reconcile whose slice comes out as the stored one but for its digest (another
// service's slice changed in a way that does not change this one's) publishes nothing:
// the write would only record what was read, and wake every reader of the slice for
// nothing. Its digest is remembered here instead, by connection, service and object, for
// as long as the stored slice is the one it was compared with (its STATUS sequence); a
// restart forgets it, which costs one call of the Func.
var readDigests sync.Map // digestKey → digestAt

type digestKey struct {
	js      jetstream.JetStream
	service string
	ref     events.Ref
}

type digestAt struct {
	sliceSeq uint64
	digest   string
}

// asRead tells whether s says what o's stored slice of the service, as the reconcile
// read it, says: same is true when nothing differs, and sameButDigest when only the
// digest does.
func asRead(o Object, s events.Slice) (same, sameButDigest bool) {
	prev, ok := o.Slices[s.Service]
	if !ok || o.sliceSeq == 0 || prev.UID != s.UID || prev.Generation != s.Generation ||
		prev.Released != s.Released || !bytes.Equal(prev.Status, s.Status) || !bytes.Equal(prev.Record, s.Record) {
		return false, false
	}
	return prev.Digest == s.Digest, prev.Digest != s.Digest
}

// rememberDigest records the digest of a slice not published because only it changed.
func rememberDigest(js jetstream.JetStream, o Object, s events.Slice) {
	readDigests.Store(digestKey{js, s.Service, o.Ref}, digestAt{o.sliceSeq, s.Digest})
}

// forgetDigest drops what rememberDigest kept once a slice of the service is published.
func forgetDigest(js jetstream.JetStream, service string, ref events.Ref) {
	readDigests.Delete(digestKey{js, service, ref})
}

// rememberedDigest is the digest of the service's last reconcile of o that published
// nothing, while o's stored slice is still the one it was compared with.
func rememberedDigest(js jetstream.JetStream, service string, o Object) string {
	v, ok := readDigests.Load(digestKey{js, service, o.Ref})
	if !ok || v.(digestAt).sliceSeq != o.sliceSeq {
		return ""
	}
	return v.(digestAt).digest
}
