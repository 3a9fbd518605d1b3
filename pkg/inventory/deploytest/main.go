package deploytest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// Main is a VM service's TestMain: it starts one seeded vcsim into *env for the package's
// tests, runs them, stops vcsim and exits with their result.
func Main(m *testing.M, env **Env) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	e, err := Start(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*env = e
	code := m.Run()
	e.Close()
	os.Exit(code)
}
