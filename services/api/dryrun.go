package api

import (
	"bytes"
	"encoding/json"

	"github.com/labstack/echo/v4"
)

// dryRun reports whether a write asks to run every stage but store nothing (`dryRun=All`,
// the one value Kubernetes knows). Any other value is 400, as in Kubernetes, so that a
// misspelt dry run never writes.
func dryRun(c echo.Context) (bool, error) {
	return dryRunValues(c.QueryParams()["dryRun"])
}

// deleteDryRun is dryRun for DELETE, where kubectl (`delete --dry-run=server`) sends the
// directive in a DeleteOptions body rather than in the query.
func deleteDryRun(c echo.Context) (bool, error) {
	if dry, err := dryRun(c); dry || err != nil {
		return dry, err
	}
	body, err := readBody(c)
	if err != nil || len(bytes.TrimSpace(body)) == 0 {
		return false, err
	}
	var opts struct {
		DryRun []string `json:"dryRun"`
	}
	if isProtobuf(c.Request().Header.Get(echo.HeaderContentType)) { // client-go's typed Delete
		if opts.DryRun, err = protobufDeleteDryRun(body); err != nil {
			return false, err
		}
	} else if err := json.Unmarshal(body, &opts); err != nil {
		return false, badRequest("the request body is not valid DeleteOptions: %v", err)
	}
	return dryRunValues(opts.DryRun)
}

func dryRunValues(values []string) (bool, error) {
	for _, v := range values {
		if v != "All" {
			return false, badRequest("unsupported dryRun value %q: the only valid value is All", v)
		}
	}
	return len(values) > 0, nil
}
