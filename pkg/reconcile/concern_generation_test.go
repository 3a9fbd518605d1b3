package reconcile

import "testing"

// A republished slice's conditions speak about the new generation; any other
// observedGeneration in the status (a policy's) and every other byte stay as they were.
func TestAtGenerationRewritesOnlyTheConditions(t *testing.T) {
	for _, tt := range []struct{ status, want string }{
		{
			`{"conditions":[{"type":"A","observedGeneration":3},{"observedGeneration":3,"type":"B"}],"policies":[{"name":"p","observedGeneration":3}]}`,
			`{"conditions":[{"type":"A","observedGeneration":4},{"observedGeneration":4,"type":"B"}],"policies":[{"name":"p","observedGeneration":3}]}`,
		},
		{
			`{"policies":[{"observedGeneration":3}],"conditions":[{"observedGeneration":33},{"observedGeneration":2}]}`,
			`{"policies":[{"observedGeneration":3}],"conditions":[{"observedGeneration":33},{"observedGeneration":2}]}`,
		},
		{`{"zone":"a"}`, `{"zone":"a"}`},
	} {
		if got := string(atGeneration([]byte(tt.status), 3, 4)); got != tt.want {
			t.Errorf("atGeneration(%s)\n = %s\nwant %s", tt.status, got, tt.want)
		}
	}
}
