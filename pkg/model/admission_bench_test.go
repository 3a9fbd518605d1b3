package model

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
)

// BenchmarkAdmitVirtualMachine is the cost of admitting one VM: the seed's vm-example
// through the whole chain (decode, metadata and schema, schema defaults, create defaults,
// validation) as a non-privileged create. Run: go test -run '^$' -bench AdmitVirtualMachine -benchmem ./model/
func BenchmarkAdmitVirtualMachine(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("testdata", "seed", "vm-example.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		b.Fatal(err)
	}
	doc["apiVersion"] = "vmoperator.vmware.com/v1alpha5" // see seedExceptions[1]
	data, err := json.Marshal(doc)
	if err != nil {
		b.Fatal(err)
	}
	env := fuzzEnv(false)
	if _, code, errs := admitDocument(data, nil, env); code != 200 {
		b.Fatalf("vm-example refused: %d %v", code, errs)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, code, _ := admitDocument(data, nil, env); code != 200 {
			b.Fatalf("refused: %d", code)
		}
	}
}
