package events

import (
	"fmt"
	"strings"
	"unicode"
)

// Subject roots. Nothing outside this package spells them.
const (
	subjectRoot   = "vmop"
	specToken     = "spec"
	statusToken   = "status"
	eventsToken   = "events"
	clusterToken  = "_" // the namespace token of cluster-scoped objects
	specTokens    = 5   // vmop.spec.<plural>.<ns>.<name>
	statusTokens  = 6   // vmop.status.<plural>.<ns>.<name>.<service>
	eventTokens   = 6   // vmop.events.<plural>.<ns>.<name>.<what>
	tokenSep      = "."
	encodedTokSep = "_"
)

// Ref names one object: its resource plural, its namespace ("" for
// cluster-scoped kinds) and its name.
type Ref struct {
	Plural, Namespace, Name string
}

// String returns "plural/namespace/name", or "plural/name" when cluster-scoped.
func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Plural + "/" + r.Name
	}
	return r.Plural + "/" + r.Namespace + "/" + r.Name
}

// Validate reports whether r can be spelled as subject tokens. Object names
// are DNS subdomains, so it only rejects what would break a subject or the
// reversible encoding: empty parts, '_', wildcards and whitespace.
func (r Ref) Validate() error {
	if !plainToken(r.Plural) {
		return fmt.Errorf("plural %q: %w", r.Plural, ErrInvalidRef)
	}
	if r.Namespace != "" && !encodable(r.Namespace) {
		return fmt.Errorf("namespace %q: %w", r.Namespace, ErrInvalidRef)
	}
	if !encodable(r.Name) {
		return fmt.Errorf("name %q: %w", r.Name, ErrInvalidRef)
	}
	return nil
}

// EncodeToken turns a namespace or name into one subject token: "." becomes
// "_" (DNS names cannot contain "_"), and "" (cluster scope) becomes "_".
func EncodeToken(s string) string {
	if s == "" {
		return clusterToken
	}
	return strings.ReplaceAll(s, tokenSep, encodedTokSep)
}

// DecodeToken reverses [EncodeToken].
func DecodeToken(tok string) string {
	if tok == clusterToken {
		return ""
	}
	return strings.ReplaceAll(tok, encodedTokSep, tokenSep)
}

// SpecSubject is the SPECS subject of an object: vmop.spec.<plural>.<ns>.<name>.
func SpecSubject(r Ref) string {
	return join(subjectRoot, specToken, r.Plural, EncodeToken(r.Namespace), EncodeToken(r.Name))
}

// StatusSubject is the STATUS subject of a service's slice of an object:
// vmop.status.<plural>.<ns>.<name>.<service>.
func StatusSubject(r Ref, service string) string {
	return join(subjectRoot, statusToken, r.Plural, EncodeToken(r.Namespace), EncodeToken(r.Name), service)
}

// EventSubject is the EVENTS subject of a CloudEvent of type typ about an
// object: vmop.events.<plural>.<ns>.<name>.<what>, where <what> is the last
// dot-separated part of typ (see the package documentation).
func EventSubject(r Ref, typ string) string {
	return join(subjectRoot, eventsToken, r.Plural, EncodeToken(r.Namespace), EncodeToken(r.Name), eventWhat(typ))
}

// SpecFilter matches the SPECS subjects of every object of a plural, or of
// every object when plural is "".
func SpecFilter(plural string) string {
	if plural == "" {
		return join(subjectRoot, specToken, ">")
	}
	return join(subjectRoot, specToken, plural, "*", "*")
}

// StatusFilter matches the STATUS subjects of every slice of every object of
// a plural, or of every object when plural is "".
func StatusFilter(plural string) string {
	if plural == "" {
		return join(subjectRoot, statusToken, ">")
	}
	return join(subjectRoot, statusToken, plural, "*", "*", "*")
}

// ServiceStatusFilter matches one service's slices of every object of a plural.
func ServiceStatusFilter(plural, service string) string {
	return join(subjectRoot, statusToken, plural, "*", "*", service)
}

// NamespaceSpecFilter matches the SPECS subjects of a plural's objects in one namespace
// ("" = cluster scope).
func NamespaceSpecFilter(plural, namespace string) string {
	return join(subjectRoot, specToken, plural, EncodeToken(namespace), "*")
}

// statusObjectFilter matches every slice of one object.
func statusObjectFilter(r Ref) string {
	return join(subjectRoot, statusToken, r.Plural, EncodeToken(r.Namespace), EncodeToken(r.Name), "*")
}

// ParseSpecSubject returns the object a SPECS subject names. Errors wrap
// [ErrMalformed].
func ParseSpecSubject(subject string) (Ref, error) {
	t := strings.Split(subject, tokenSep)
	if len(t) != specTokens || t[0] != subjectRoot || t[1] != specToken {
		return Ref{}, fmt.Errorf("spec subject %q: %w", subject, ErrMalformed)
	}
	return refFromTokens(t[2:5]), nil
}

// ParseStatusSubject returns the object and the service a STATUS subject
// names. Errors wrap [ErrMalformed].
func ParseStatusSubject(subject string) (Ref, string, error) {
	t := strings.Split(subject, tokenSep)
	if len(t) != statusTokens || t[0] != subjectRoot || t[1] != statusToken {
		return Ref{}, "", fmt.Errorf("status subject %q: %w", subject, ErrMalformed)
	}
	return refFromTokens(t[2:5]), t[5], nil
}

// ParseEventSubject returns the object an EVENTS subject speaks about and the subject's
// last token, what happened (the last part of the CloudEvent's type). Errors wrap
// [ErrMalformed].
func ParseEventSubject(subject string) (ref Ref, what string, err error) {
	t := strings.Split(subject, tokenSep)
	if len(t) != eventTokens || t[0] != subjectRoot || t[1] != eventsToken {
		return Ref{}, "", fmt.Errorf("event subject %q: %w", subject, ErrMalformed)
	}
	return refFromTokens(t[2:5]), t[5], nil
}

// ObjectKey maps any SPECS, STATUS or EVENTS subject to the SPECS subject of
// the object it speaks about, so that all messages about one object share a
// key in [Consume]. Other subjects are their own key.
func ObjectKey(subject string) string {
	t := strings.Split(subject, tokenSep)
	if len(t) < specTokens || t[0] != subjectRoot {
		return subject
	}
	switch {
	case t[1] == specToken && len(t) == specTokens,
		t[1] == statusToken && len(t) == statusTokens,
		t[1] == eventsToken && len(t) == eventTokens:
		return join(subjectRoot, specToken, t[2], t[3], t[4])
	}
	return subject
}

func refFromTokens(t []string) Ref {
	return Ref{Plural: t[0], Namespace: DecodeToken(t[1]), Name: DecodeToken(t[2])}
}

func join(tokens ...string) string { return strings.Join(tokens, tokenSep) }

// plainToken reports whether s is usable as one subject token as it is
// (plural, service, event <what>).
func plainToken(s string) bool {
	return s != "" && !strings.ContainsAny(s, tokenSep+encodedTokSep) && safeChars(s)
}

// encodable reports whether s survives EncodeToken/DecodeToken unchanged.
func encodable(s string) bool {
	return s != "" && !strings.Contains(s, encodedTokSep) && safeChars(s)
}

func safeChars(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool {
		return r == '*' || r == '>' || unicode.IsSpace(r) || unicode.IsControl(r)
	})
}
