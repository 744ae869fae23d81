// Package suggest guesses which allowed name a mistyped one meant, for
// "did you mean" hints in error messages.
package suggest

import (
	"fmt"
	"slices"
	"strings"
)

// Closest returns the candidate nearest to s by edit distance (ignoring
// case) when it is near enough to be a typo: at most 2 edits, or 3 for names
// longer than 6; "" otherwise.
func Closest(s string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if strings.EqualFold(s, c) {
			return c
		}
		if d := editDistance(strings.ToLower(s), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if bestD <= 2 || (bestD <= 3 && len(s) > 6) {
		return best
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// OneOf returns nil when v is one of allowed, else an error naming the
// setting, the value, what is allowed and the likely intended value:
// `--format "xlm": allowed table, json; did you mean json?`.
func OneOf(name, v string, allowed []string) error {
	if slices.Contains(allowed, v) {
		return nil
	}
	msg := strings.Join(allowed, ", ")
	if g := Closest(v, allowed); g != "" {
		msg += "; did you mean " + g + "?"
	}
	return fmt.Errorf("%s %q: allowed %s", name, v, msg)
}
