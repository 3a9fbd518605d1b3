package vcenter

import (
	"io"
	"net/http"
)

// drainLimit bounds what closing a response reads to reach its end; a longer remainder
// costs the connection instead.
const drainLimit = 64 << 10

// drainBodies reads each response to its end when it is closed. govmomi's SOAP decoder
// stops at the envelope's closing tag, before a chunked response's last chunk, and net/http
// drops a connection whose response was closed unread: every large answer (a VM's config,
// a batch of updates) would cost a new TLS handshake on the next call.
type drainBodies struct{ next http.RoundTripper }

func (d drainBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := d.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	res.Body = drainOnClose{res.Body}
	return res, nil
}

type drainOnClose struct{ io.ReadCloser }

func (b drainOnClose) Close() error {
	_, _ = io.Copy(io.Discard, io.LimitReader(b.ReadCloser, drainLimit))
	return b.ReadCloser.Close()
}
