package readmodel

import "context"

// WaitRV blocks until the read model reflects rv ("a.b"): both checkpoints at or past it,
// or ctx ends. A malformed rv is [ErrInvalid].
func (s *Store) WaitRV(ctx context.Context, rv string) error {
	p, err := parseRV(rv)
	if err != nil {
		return err
	}
	return s.progress.wait(ctx, func() bool { return s.progress.spec >= p.spec && s.progress.status >= p.status })
}

// CheckRV reports whether rv is a well-formed resourceVersion ("", "0" or "a.b");
// otherwise [ErrInvalid].
func CheckRV(rv string) error {
	_, err := parseRV(rv)
	return err
}
