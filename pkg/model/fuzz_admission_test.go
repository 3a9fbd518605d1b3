package model

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzAdmitVirtualMachine feeds arbitrary VirtualMachine documents (mutated bytes, plus
// the edits of fuzz_edits_test.go) through the gateway's admission chain as a create by
// a privileged or an ordinary caller, and checks what must hold for any input:
//   - nothing panics;
//   - an accepted object, submitted back as an update of itself (kubectl apply of what
//     the gateway returned), is accepted and comes out byte-for-byte unchanged;
//   - create defaulting run again on an accepted object changes nothing (every rule only
//     fills what is empty). It runs privileged: D7/D8 rightly deny a non-privileged caller
//     who supplies UUIDs, and an accepted object carries them.
//
// `go test` replays the seed corpus and testdata/fuzz/FuzzAdmitVirtualMachine; search for
// new inputs with `make fuzz`, i.e. go test -run '^$' -fuzz FuzzAdmitVirtualMachine -fuzztime 3m ./model/
func FuzzAdmitVirtualMachine(f *testing.F) {
	for _, doc := range fuzzSeedDocuments(f) {
		f.Add(doc, false, []byte(nil))
		f.Add(doc, true, []byte(nil))
	}
	f.Fuzz(func(t *testing.T, doc []byte, privileged bool, edits []byte) {
		checkAdmissionProperties(t, applyFuzzEdits(doc, edits), privileged)
	})
}

// checkAdmissionProperties is the fuzz target's body: admit doc as a create and, when accepted,
// check the re-submission and re-defaulting properties.
func checkAdmissionProperties(t *testing.T, doc []byte, privileged bool) {
	t.Helper()
	env := fuzzEnv(privileged)
	created, code, errs := admitDocument(doc, nil, env)
	if code != 200 {
		if code != 400 && len(errs) == 0 {
			t.Fatalf("refused with %d but no field error", code)
		}
		return
	}
	accepted := encodeVM(t, created)

	updated, code, errs := admitDocument(accepted, created, env)
	if code != 200 {
		t.Fatalf("accepted object re-submitted as an update of itself: %d %v\nobject: %s", code, errs, accepted)
	}
	if again := encodeVM(t, updated); !bytes.Equal(again, accepted) {
		t.Fatalf("re-submission changed the object (-accepted +updated):\n%s", jsonDiff(t, accepted, again))
	}

	redefaulted := decodeVM(t, accepted)
	if ferr := DefaultVirtualMachine(redefaulted, nil, fuzzEnv(true)); ferr != nil {
		t.Fatalf("create defaulting again denied: %v\nobject: %s", ferr, accepted)
	}
	if again := encodeVM(t, redefaulted); !bytes.Equal(again, accepted) {
		t.Fatalf("create defaulting again changed the object (-accepted +redefaulted):\n%s", jsonDiff(t, accepted, again))
	}
}
func encodeVM(t *testing.T, vm *VirtualMachine) []byte {
	t.Helper()
	b, err := json.Marshal(vm)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodeVM(t *testing.T, data []byte) *VirtualMachine {
	t.Helper()
	vm := new(VirtualMachine)
	if err := json.Unmarshal(data, vm); err != nil {
		t.Fatal(err)
	}
	return vm
}

// jsonDiff renders the difference of two JSON documents for a failure message.
func jsonDiff(t *testing.T, a, b []byte) string {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return cmp.Diff(x, y)
}

// The handmade seeds are worth their place only if the chain accepts them (as privileged:
// upg-1 carries UUIDs), so the fuzzer starts from objects that reach every stage.
func TestHandmadeFuzzSeedsAreAccepted(t *testing.T) {
	for _, doc := range handmadeFuzzDocuments {
		if _, code, errs := admitDocument([]byte(doc), nil, fuzzEnv(true)); code != 200 {
			t.Errorf("%d %v\n%s", code, errs, doc)
		}
	}
}
