package model

import (
	"fmt"
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// PolicyWorkload is what a ComputePolicy's match is evaluated against (api-rules §9.5).
type PolicyWorkload struct {
	Kind        string            // VirtualMachine (or Pod)
	Labels      map[string]string // the workload's labels
	GuestID     string            // vSphere guest identifier, e.g. ubuntu64Guest
	GuestFamily string            // Darwin, Linux, Netware, Other, Solaris or Windows
	ImageName   string            // the image object's name; "" when there is none
	ImageLabels map[string]string
}

// Matches reports whether the match selects w: image and workload criteria and-ed with the
// nested matches combined by op. A nil match selects every workload. The error names a
// criterion that cannot be evaluated (a bad regular expression or label requirement).
func (m *MatchSpec) Matches(w PolicyWorkload) (bool, error) {
	if m == nil {
		return true, nil
	}
	if ok, err := m.Image.matches(w); !ok || err != nil {
		return false, err
	}
	if ok, err := m.Workload.matches(w); !ok || err != nil {
		return false, err
	}
	if len(m.Match) == 0 {
		return true, nil
	}
	or := m.Op == MatchOpOr
	for i := range m.Match {
		ok, err := m.Match[i].Matches(w)
		if err != nil {
			return false, fmt.Errorf("match[%d]: %w", i, err)
		}
		if ok == or { // the first true of an Or, the first false of an And decides
			return ok, nil
		}
	}
	return !or, nil
}

func (m *MatchImageSpec) matches(w PolicyWorkload) (bool, error) {
	if m == nil {
		return true, nil
	}
	if m.Name != nil {
		ok, err := m.Name.matches(w.ImageName)
		if !ok || err != nil {
			return false, wrapMatch("image.name", err)
		}
	}
	ok, err := labelsMatch(m.Labels, w.ImageLabels)
	return ok, wrapMatch("image.labels", err)
}

func (m *MatchWorkloadSpec) matches(w PolicyWorkload) (bool, error) {
	if m == nil {
		return true, nil
	}
	if m.Kind != "" && m.Kind != w.Kind {
		return false, nil
	}
	if g := m.Guest; g != nil {
		if g.GuestID != nil {
			ok, err := g.GuestID.matches(w.GuestID)
			if !ok || err != nil {
				return false, wrapMatch("workload.guest.guestID", err)
			}
		}
		if g.GuestFamily != nil {
			ok, err := (&StringMatcherSpec{Op: g.GuestFamily.Op, Value: g.GuestFamily.Value}).matches(w.GuestFamily)
			if !ok || err != nil {
				return false, wrapMatch("workload.guest.guestFamily", err)
			}
		}
	}
	ok, err := labelsMatch(m.Labels, w.Labels)
	return ok, wrapMatch("workload.labels", err)
}

// matches compares s with the matcher's value; Equal when op is empty.
func (m *StringMatcherSpec) matches(s string) (bool, error) {
	v := m.Value
	switch m.Op {
	case "", MatchEqual:
		return s == v, nil
	case MatchNotEqual:
		return s != v, nil
	case MatchContains:
		return strings.Contains(s, v), nil
	case MatchNotContains:
		return !strings.Contains(s, v), nil
	case MatchHasPrefix:
		return strings.HasPrefix(s, v), nil
	case MatchNotHasPrefix:
		return !strings.HasPrefix(s, v), nil
	case MatchHasSuffix:
		return strings.HasSuffix(s, v), nil
	case MatchNotHasSuffix:
		return !strings.HasSuffix(s, v), nil
	case MatchRegexp, MatchNotRegexp:
		re, err := regexp.Compile(v)
		if err != nil {
			return false, fmt.Errorf("value %q is not a regular expression: %w", v, err)
		}
		return re.MatchString(s) == (m.Op == MatchRegexp), nil
	}
	return false, fmt.Errorf("unknown op %q", m.Op)
}

// labelsMatch reports whether set meets every requirement.
func labelsMatch(reqs []metav1.LabelSelectorRequirement, set map[string]string) (bool, error) {
	if len(reqs) == 0 {
		return true, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(&metav1.LabelSelector{MatchExpressions: reqs})
	if err != nil {
		return false, err
	}
	return sel.Matches(labels.Set(set)), nil
}

func wrapMatch(path string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", path, err)
}
