package reconcile

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vmop/vmop/pkg/events"
)

// Concern says what of an object a service does not read, given the object
// (Config.Concern): a negative list, so that whatever it does not name (a field added
// later) concerns the service. It may depend on the object, e.g. placement reads spec.volumes only until the VM
// exists; it reads nothing else than o (no I/O).
type Concern func(o Object) Ignored

// Ignored is what a service does not read of an object and of its input slices.
type Ignored struct {
	Spec   []Path            // paths in the object's record, e.g. {"spec", "volumes"}
	Inputs map[string][]Path // by input service, paths in its status object
	// OnlyOfInputs: by input service, the only paths of its status object the service
	// reads; the rest of that slice is ignored. For an input whose slice is a wake-up
	// (e.g. power's powerState: a VM that came on), whatever else it says is not news.
	OnlyOfInputs map[string][]Path
	// OnlyConditionsOf: by input service, the only types of its conditions the service
	// reads (e.g. the prerequisites of a power-on); its other conditions are ignored.
	OnlyConditionsOf map[string][]string
	// UnreadInputs are input services nothing of whose slice the service reads, not even
	// its generation or release (e.g. what a VM's services wait for before it exists).
	UnreadInputs []string
	// InputGenerations: the inputs' generations (and their conditions'
	// observedGeneration) do not matter, only what they say.
	InputGenerations bool
	// Unsettled: the service's last report asks for another attempt (e.g. vCenter refused
	// its change): every new generation concerns it, as a user's touch retries it.
	Unsettled bool
}

// Path is a JSON path by object keys, e.g. {"metadata", "annotations", "example.com/key"}.
type Path []string

// alwaysIgnored are parts of a record no service reads: the counters of its changes and
// kubectl's copy of what was applied.
var alwaysIgnored = []Path{
	{"metadata", "generation"},
	{"metadata", "resourceVersion"},
	{"metadata", "managedFields"},
	{"metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"},
}

var unconcerned = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "vmop_reconciles_unconcerned_total",
	Help: "Reconciles answered with the previous slice because nothing the service reads changed, by service and kind.",
}, []string{"service", "kind"})

// onlyConcerned is f, called only for changes that concern the service (Config.Concern;
// f itself without one). When a spec or input slice message brings nothing the concern
// says the service reads, the previous slice is republished for the object's generation
// and f is not called: no vCenter read for a change that is not the service's. A resync,
// a related object's change or a triggered reconcile always calls f, so drift and what
// the digest does not cover are still seen. Trigger applies it under the object's lock.
func onlyConcerned(cfg Config, f Func) Func {
	if cfg.Concern == nil {
		return f
	}
	return func(ctx context.Context, o Object) (Result, error) {
		res, ok, err := unconcernedAnswer(cfg, o)
		if err != nil {
			return Result{}, err
		}
		if ok {
			unconcerned.WithLabelValues(cfg.Service, o.Ref.Plural).Inc()
			res.answered = true
			return res, nil
		}
		digest := res.digest
		res, err = f(ctx, o)
		res.digest = digest
		return res, err
	}
}

// unconcernedAnswer is the service's answer to o when the message that brought o
// changed nothing it reads: its previous slice, for o's generation. ok is false when the
// change concerns it, or o did not come by a message; res then carries only the digest of
// what it read, for the slice f's answer becomes. What the service reads (the object's
// record and its input slices, each without what the concern ignores) is compared by its
// digest with that of the service's previous slice, or of its last reconcile that
// published nothing.
func unconcernedAnswer(cfg Config, o Object) (res Result, ok bool, err error) {
	if a := o.answered; a != nil {
		return a.res, a.ok, nil
	}
	ign := cfg.Concern(o)
	digest, err := concernDigest(cfg.Service, o, ign)
	if err != nil {
		return Result{}, false, fmt.Errorf("%w: digest of %s: %v", events.ErrPermanent, o.Ref, err)
	}
	res.digest = digest
	prev, found := o.Slices[cfg.Service]
	read := found && (prev.Digest == digest || o.readDigest == digest)
	if !o.byMessage || ign.Unsettled || !read || prev.Released || prev.Generation > o.Meta.Generation {
		return res, false, nil
	}
	if len(prev.Status) > 0 {
		res.Status = atGeneration(prev.Status, prev.Generation, o.Meta.Generation)
	}
	res.Record = prev.Record
	return res, true, nil
}

// concernAnswer is unconcernedAnswer's result for one read of an object, kept with the
// read (Object.answered) when the reconcile under the lease reuses it.
type concernAnswer struct {
	res Result
	ok  bool
}

// concernDigest sums what the service reads of o: its record and its input slices
// without what ign names.
func concernDigest(service string, o Object, ign Ignored) (string, error) {
	record, err := without(o.Spec.Body, slices.Concat(alwaysIgnored, ign.Spec))
	if err != nil {
		return "", fmt.Errorf("record: %w", err)
	}
	read := map[string]any{"record": record}
	for _, svc := range slices.Sorted(maps.Keys(o.Slices)) {
		if svc == service || slices.Contains(ign.UnreadInputs, svc) {
			continue
		}
		s := o.Slices[svc]
		var status any
		if len(s.Status) > 0 {
			if status, err = without(s.Status, ign.Inputs[svc]); err != nil {
				return "", fmt.Errorf("%s slice: %w", svc, err)
			}
			if types, ok := ign.OnlyConditionsOf[svc]; ok {
				keepConditions(status, types)
			}
			if only, ok := ign.OnlyOfInputs[svc]; ok {
				status = picked(status, only)
			}
		}
		in := map[string]any{"released": s.Released, "status": status}
		if ign.InputGenerations {
			forgetObservedGenerations(status)
		} else {
			in["generation"] = s.Generation
		}
		read["input "+svc] = in
	}
	raw, err := json.Marshal(read) // map keys are sorted: the same content sums the same
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:16]), nil
}

// without decodes the JSON object doc and removes the paths from it.
func without(doc []byte, paths []Path) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	for _, p := range paths {
		remove(v, p)
	}
	return v, nil
}

// picked is the decoded value v with only the paths given (those present), each by its
// path joined, so that no two paths' values can be mistaken for one another.
func picked(v any, paths []Path) map[string]any {
	out := map[string]any{}
	for _, p := range paths {
		cur, ok := v, true
		for _, key := range p {
			obj, isObj := cur.(map[string]any)
			if cur, ok = obj[key]; !isObj || !ok {
				ok = false
				break
			}
		}
		if ok {
			out[strings.Join(p, ".")] = cur
		}
	}
	return out
}

// remove deletes path from v, when there, and the objects on the path that it leaves
// empty: an empty object says what an absent one does (metadata.labels left with nothing
// but the zone label, which is ignored, is no labels at all).
func remove(v any, path Path) {
	obj, ok := v.(map[string]any)
	if !ok || len(path) == 0 {
		return
	}
	key := path[0]
	if len(path) == 1 {
		delete(obj, key)
		return
	}
	child, ok := obj[key].(map[string]any)
	if !ok {
		return
	}
	remove(child, path[1:])
	if len(child) == 0 {
		delete(obj, key)
	}
}

// keepConditions removes from a decoded status object the conditions whose type is not
// one of types.
func keepConditions(status any, types []string) {
	obj, _ := status.(map[string]any)
	conds, ok := obj["conditions"].([]any)
	if !ok {
		return
	}
	obj["conditions"] = slices.DeleteFunc(conds, func(c any) bool {
		cond, _ := c.(map[string]any) // anything else is no condition of these types
		typ, _ := cond["type"].(string)
		return !slices.Contains(types, typ)
	})
}

// forgetObservedGenerations removes the observedGeneration of the conditions of a
// decoded status object.
func forgetObservedGenerations(status any) {
	obj, _ := status.(map[string]any)
	conds, _ := obj["conditions"].([]any)
	for _, c := range conds {
		if c, ok := c.(map[string]any); ok {
			delete(c, "observedGeneration")
		}
	}
}

// atGeneration is a previous slice's status (about generation prev) with its conditions
// about generation instead: what they say holds for it, since nothing they rest on
// changed. Only those numbers change, byte for byte, so that the service's next reconcile
// of the same state publishes nothing new; other observedGenerations in the status (e.g.
// status.policies', another object's) are left alone.
func atGeneration(status json.RawMessage, prev, generation int64) json.RawMessage {
	start, end, ok := conditionsValue(status)
	if !ok {
		return status
	}
	out := slices.Clone(status[:start])
	conds := status[start:end]
	for _, closer := range []string{",", "}"} {
		conds = bytes.ReplaceAll(conds,
			[]byte(`"observedGeneration":`+strconv.FormatInt(prev, 10)+closer),
			[]byte(`"observedGeneration":`+strconv.FormatInt(generation, 10)+closer))
	}
	return append(append(out, conds...), status[end:]...)
}

// conditionsValue is where the value of the status object's "conditions" lies in status.
func conditionsValue(status []byte) (start, end int, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(status))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, 0, false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return 0, 0, false
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return 0, 0, false
		}
		if key == "conditions" {
			end := int(dec.InputOffset())
			return end - len(value), end, true
		}
	}
	return 0, 0, false
}
