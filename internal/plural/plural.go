// Package plural writes counts as sentences do: "1 arrow", "2 arrows", "0 boxes".
package plural

import "strconv"

// Count is n followed by one when n is 1 (or -1), else by many; an empty many is one + "s".
func Count(n int, one, many string) string {
	return strconv.Itoa(n) + " " + Word(n, one, many)
}

// Word is the noun alone for n things: one when n is 1 (or -1), else many (one + "s" if empty).
func Word(n int, one, many string) string {
	if n == 1 || n == -1 {
		return one
	}
	if many == "" {
		return one + "s"
	}
	return many
}
