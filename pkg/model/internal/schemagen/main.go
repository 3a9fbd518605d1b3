// Command schemagen writes zz_generated.schema.json: the structural OpenAPI v3 schema of
// every kind registered in kinds.go, generated from the Go types of the package in the
// current directory. Run it through `go generate` in pkg/model.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/vmop/vmop/pkg/model/internal/schemagen/structural"
)

func main() {
	dir := flag.String("dir", ".", "directory of the API types package")
	out := flag.String("out", "zz_generated.schema.json", "output file")
	flag.Parse()
	if err := run(*dir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}

func run(dir, out string) error {
	data, err := structural.Generate(dir)
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		return fmt.Errorf("write schemas: %w", err)
	}
	return nil
}
