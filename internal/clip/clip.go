// Package clip shortens text for one-line messages, logs and labels.
package clip

// Runes returns s cut to at most n runes, the last of them "…" when anything was cut. It cuts
// between runes, never inside one, so the result stays valid UTF-8 when s is.
func Runes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	return string(r[:n-1]) + "…"
}
