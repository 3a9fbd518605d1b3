// Package console is the web console: static HTML, CSS and JavaScript modules embedded in
// the binary, served without a token. The page itself calls only the public REST API with
// the user's bearer token, so it can do nothing the user could not do with kubectl.
package console

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed assets
var assets embed.FS

// Prefix is where the gateway mounts the console's assets; the index is also at "/".
const Prefix = "/console/"

// securityHeaders keep the page from loading or sending anything but its own assets and
// API calls (the token lives in the page's sessionStorage) and from being framed.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
	"X-Content-Type-Options":  "nosniff",
	"Referrer-Policy":         "no-referrer",
	"Cache-Control":           "no-cache", // assets change with the binary; revalidation is cheap
}

// Handler serves the console: the index for "/" and Prefix, the assets under Prefix.
func Handler() http.Handler {
	root, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.FileServerFS(root)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range securityHeaders {
			w.Header().Set(k, v)
		}
		name := strings.TrimPrefix(r.URL.Path, strings.TrimSuffix(Prefix, "/"))
		if r.URL.Path == "/" || name == "/" || name == "" {
			http.ServeFileFS(w, r, root, "index.html")
			return
		}
		if strings.HasSuffix(name, "/") {
			http.NotFound(w, r) // no listings of the asset tree
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = name
		files.ServeHTTP(w, r2)
	})
}
