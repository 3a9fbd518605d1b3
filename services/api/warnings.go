package api

import (
	"fmt"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
)

// Warning headers are bounded as kube-apiserver bounds them: their texts add up to at
// most 4096 runes; past that, every text is cut to 256 runes and what still does not fit
// is left out. A body of thousands of unknown fields cannot make headers that clients
// (and proxies) refuse.
const (
	maxWarningRunes     = 4096
	maxWarningItemRunes = 256
)

// setWarnings sends admission warnings the way the apiserver does (kubectl prints them),
// each text once.
func setWarnings(c echo.Context, warnings []string) {
	var texts []string
	seen := make(map[string]bool, len(warnings)) // a body can carry ~10^5 distinct unknown fields
	total := 0
	for _, w := range warnings {
		if w != "" && !seen[w] {
			seen[w] = true
			texts = append(texts, w)
			total += utf8.RuneCountInString(w)
		}
	}
	if total > maxWarningRunes {
		texts = truncateWarnings(texts)
	}
	for _, w := range texts {
		c.Response().Header().Add("Warning", fmt.Sprintf("299 - %q", w))
	}
}

// truncateWarnings cuts each text to maxWarningItemRunes and keeps those that fit in
// maxWarningRunes.
func truncateWarnings(texts []string) []string {
	var out []string
	total := 0
	for _, w := range texts {
		if r := []rune(w); len(r) > maxWarningItemRunes {
			w = string(r[:maxWarningItemRunes-3]) + "..."
		}
		n := utf8.RuneCountInString(w)
		if total+n > maxWarningRunes {
			break
		}
		out, total = append(out, w), total+n
	}
	return out
}
