package model

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// windowsHostNameMax is the longest computer name Windows accepts (its NetBIOS name).
const windowsHostNameMax = 15

// validateHostName is HN-1..5: the guest's host name (spec.network.hostName, else
// metadata.name) and domain name. Only the first failing rule is reported, at the path of
// the host name's source.
func validateHostName(r *vmReq) field.ErrorList {
	host, hostPath := hostNameOf(r.New)
	var domain string
	if n := r.New.Spec.Network; n != nil {
		domain = n.DomainName
	}
	_, isIP := parseIP(host)
	switch {
	case !isIP && !isHostLabel(host):
		return field.ErrorList{field.Invalid(hostPath, host,
			"host name must be an IP address or a label of 1-63 letters, digits or symbols with hyphens only inside")}
	case isIP && domain != "":
		return field.ErrorList{field.Invalid(hostPath, host, "host name may not be an IP address when domainName is set")}
	case isWindows(r.New) && utf8.RuneCountInString(host) > windowsHostNameMax && !longWindowsNameKept(r):
		return field.ErrorList{field.Invalid(hostPath, host, "host name of a Windows guest may not exceed 15 characters")}
	case domain != "" && !isDomainName(domain):
		return field.ErrorList{field.Invalid(networkPath.Child("domainName"), domain,
			"domain name must be at most 253 characters of dot-separated labels ending in a top-level label of 2-63 ASCII letters or digits")}
	case domain != "" && utf8.RuneCountInString(host)+1+utf8.RuneCountInString(domain) > 255:
		return field.ErrorList{field.Invalid(networkPath, host+"."+domain, "host name and domain name together may not exceed 255 characters")}
	}
	return nil
}

// hostNameOf is the guest's host name and the path it comes from.
func hostNameOf(vm *VirtualMachine) (string, *field.Path) {
	if n := vm.Spec.Network; n != nil && n.HostName != "" {
		return n.HostName, networkPath.Child("hostName")
	}
	return vm.Name, field.NewPath("metadata", "name")
}

// isWindows is HN-3's test for a Windows guest.
func isWindows(vm *VirtualMachine) bool {
	return strings.HasPrefix(vm.Spec.GuestID, "win") || (vm.Spec.Bootstrap != nil && vm.Spec.Bootstrap.Sysprep != nil)
}

// longWindowsNameKept is HN-3's exception: an update of a Sysprep VM whose host name was
// already too long before the rule existed.
func longWindowsNameKept(r *vmReq) bool {
	if r.Old == nil || r.Old.Spec.Bootstrap == nil || r.Old.Spec.Bootstrap.Sysprep == nil {
		return false
	}
	old, _ := hostNameOf(r.Old)
	return utf8.RuneCountInString(old) > windowsHostNameMax
}

// isHostLabel is HN-1's label: 1-63 letters (any script), digits or symbols, with hyphens
// allowed only inside; no dots, no underscores.
func isHostLabel(s string) bool {
	return isDNSLabel(s, isHostRune)
}

func isHostRune(r rune) bool {
	return isASCIIAlnum(r) || unicode.IsLetter(r) || unicode.IsSymbol(r)
}

func isASCIIAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// isDNSLabel is a label of 1-63 runes allowed by ok, with hyphens allowed only inside.
func isDNSLabel(s string, ok func(rune) bool) bool {
	n := utf8.RuneCountInString(s)
	if n < 1 || n > 63 || strings.HasPrefix(s, "-") || strings.HasSuffix(s, "-") {
		return false
	}
	for _, r := range s {
		if r != '-' && !ok(r) {
			return false
		}
	}
	return true
}

// isDomainName is HN-4's domain: at most 253 characters of dot-separated host labels, the
// last one (the top-level domain) of 2-63 ASCII letters and digits.
func isDomainName(s string) bool {
	if utf8.RuneCountInString(s) > 253 {
		return false
	}
	labels := strings.Split(s, ".")
	last := labels[len(labels)-1]
	for _, l := range labels[:len(labels)-1] {
		if !isHostLabel(l) {
			return false
		}
	}
	return utf8.RuneCountInString(last) >= 2 && isDNSLabel(last, isASCIIAlnum)
}
