package main

import (
	"slices"
	"strings"
	"testing"
)

// kubectl get --sort-by sorts the server's Table by a field of each row's object, which it
// asks for with includeObject=Object: a field no printer column shows still sorts.
func TestKubectlSortBy(t *testing.T) {
	s := startStack(t)
	out := s.kubectl("get", "vmi", "-n", "my-namespace", "--sort-by=.status.name", "-o", "custom-columns=NAME:.status.name", "--no-headers")
	names := strings.Fields(out)
	if len(names) < 3 || !slices.IsSorted(names) {
		t.Errorf("sorted by .status.name: %q", names)
	}
	out = s.kubectl("get", "vmi", "-n", "my-namespace", "--sort-by=.status.name")
	var displayNames []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		displayNames = append(displayNames, strings.Fields(line)[1])
	}
	if !slices.Equal(displayNames, names) {
		t.Errorf("kubectl get --sort-by=.status.name (server-side Table) lists %q, want %q", displayNames, names)
	}
}
