package scene

import (
	"errors"
	"fmt"
	"strings"
)

// Fractional z-order keys, as Excalidraw uses them (packages/element/src/fractionalIndex.ts, on top
// of the "fractional-indexing" npm package with its default base-62 digits). A key is an integer part
// whose head character encodes its length ('a' = 2 chars, 'b' = 3, ... 'z' = 27; 'Z' = 2, 'Y' = 3,
// ... 'A' = 27 for negative integers), followed by a fractional part without trailing zeros.
// Keys compare as plain byte strings.

const (
	base62Digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	integerZero  = "a0"
	smallestKey  = "A00000000000000000000000000" // 'A' followed by 26 zeros: not a valid key
)

var errKey = errors.New("invalid fractional index")

func integerLength(head byte) (int, error) {
	switch {
	case head >= 'a' && head <= 'z':
		return int(head-'a') + 2, nil
	case head >= 'A' && head <= 'Z':
		return int('Z'-head) + 2, nil
	}
	return 0, fmt.Errorf("%w: head %q", errKey, head)
}

func integerPart(key string) (string, error) {
	if key == "" {
		return "", fmt.Errorf("%w: empty", errKey)
	}
	n, err := integerLength(key[0])
	if err != nil {
		return "", err
	}
	if n > len(key) {
		return "", fmt.Errorf("%w: %q is shorter than its integer part", errKey, key)
	}
	return key[:n], nil
}

// validateKey reports why key is not a valid fractional index, or nil.
func validateKey(key string) error {
	if key == smallestKey {
		return fmt.Errorf("%w: %q", errKey, key)
	}
	i, err := integerPart(key)
	if err != nil {
		return err
	}
	for k := 0; k < len(key); k++ {
		if k > 0 && strings.IndexByte(base62Digits, key[k]) < 0 {
			return fmt.Errorf("%w: %q has a non-base-62 digit", errKey, key)
		}
	}
	f := key[len(i):]
	if strings.HasSuffix(f, "0") {
		return fmt.Errorf("%w: %q ends in a zero", errKey, key)
	}
	return nil
}

// midpoint returns a fractional part strictly between a and b; b == "" with !hasB means no bound.
func midpoint(a, b string, hasB bool) string {
	if hasB && a >= b {
		panic("scene: midpoint a >= b") // callers check order; reaching this is a bug here
	}
	if hasB {
		n := 0
		for n < len(b) && digitAt(a, n) == b[n] {
			n++
		}
		if n > 0 {
			return b[:n] + midpoint(sliceFrom(a, n), b[n:], true)
		}
	}
	digitA := 0
	if a != "" {
		digitA = strings.IndexByte(base62Digits, a[0])
	}
	digitB := len(base62Digits)
	if hasB {
		digitB = strings.IndexByte(base62Digits, b[0])
	}
	if digitB-digitA > 1 {
		mid := (digitA + digitB + 1) / 2 // Math.round(0.5 * (a + b))
		return string(base62Digits[mid])
	}
	if hasB && len(b) > 1 {
		return b[:1]
	}
	return string(base62Digits[digitA]) + midpoint(sliceFrom(a, 1), "", false)
}

func digitAt(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return '0'
}

func sliceFrom(s string, i int) string {
	if i >= len(s) {
		return ""
	}
	return s[i:]
}

func incrementInteger(x string) (string, bool) {
	head, digs := x[0], []byte(x[1:])
	carry := true
	for i := len(digs) - 1; carry && i >= 0; i-- {
		d := strings.IndexByte(base62Digits, digs[i]) + 1
		if d == len(base62Digits) {
			digs[i] = '0'
		} else {
			digs[i] = base62Digits[d]
			carry = false
		}
	}
	if carry {
		switch head {
		case 'Z':
			return "a0", true
		case 'z':
			return "", false
		}
		h := head + 1
		if h > 'a' {
			digs = append(digs, '0')
		} else {
			digs = digs[:len(digs)-1]
		}
		return string(h) + string(digs), true
	}
	return string(head) + string(digs), true
}

func decrementInteger(x string) (string, bool) {
	head, digs := x[0], []byte(x[1:])
	borrow := true
	for i := len(digs) - 1; borrow && i >= 0; i-- {
		d := strings.IndexByte(base62Digits, digs[i]) - 1
		if d == -1 {
			digs[i] = 'z'
		} else {
			digs[i] = base62Digits[d]
			borrow = false
		}
	}
	if borrow {
		switch head {
		case 'a':
			return "Zz", true
		case 'A':
			return "", false
		}
		h := head - 1
		if h < 'Z' {
			digs = append(digs, 'z')
		} else {
			digs = digs[:len(digs)-1]
		}
		return string(h) + string(digs), true
	}
	return string(head) + string(digs), true
}

// keyBetween returns a key strictly between a and b; "" means unbounded on that side.
func keyBetween(a, b string) (string, error) {
	if a != "" {
		if err := validateKey(a); err != nil {
			return "", err
		}
	}
	if b != "" {
		if err := validateKey(b); err != nil {
			return "", err
		}
	}
	if a != "" && b != "" && a >= b {
		return "", fmt.Errorf("%w: %q is not below %q", errKey, a, b)
	}
	if a == "" {
		if b == "" {
			return integerZero, nil
		}
		ib, _ := integerPart(b)
		fb := b[len(ib):]
		if ib == smallestKey {
			return ib + midpoint("", fb, true), nil
		}
		if ib < b {
			return ib, nil
		}
		res, ok := decrementInteger(ib)
		if !ok {
			return "", fmt.Errorf("%w: cannot go below %q", errKey, b)
		}
		return res, nil
	}
	ia, _ := integerPart(a)
	fa := a[len(ia):]
	if b == "" {
		i, ok := incrementInteger(ia)
		if !ok {
			return ia + midpoint(fa, "", false), nil
		}
		return i, nil
	}
	ib, _ := integerPart(b)
	fb := b[len(ib):]
	if ia == ib {
		return ia + midpoint(fa, fb, true), nil
	}
	i, ok := incrementInteger(ia)
	if !ok {
		return "", fmt.Errorf("%w: cannot go above %q", errKey, a)
	}
	if i < b {
		return i, nil
	}
	return ia + midpoint(fa, "", false), nil
}

// keysBetween returns n increasing keys strictly between a and b, spread the way
// generateNKeysBetween spreads them (bisecting when both bounds are set).
func keysBetween(a, b string, n int) ([]string, error) {
	switch {
	case n == 0:
		return nil, nil
	case n == 1:
		k, err := keyBetween(a, b)
		if err != nil {
			return nil, err
		}
		return []string{k}, nil
	case b == "":
		out := make([]string, 0, n)
		c := a
		for range n {
			k, err := keyBetween(c, b)
			if err != nil {
				return nil, err
			}
			out = append(out, k)
			c = k
		}
		return out, nil
	case a == "":
		out := make([]string, n)
		c := b
		for i := n - 1; i >= 0; i-- {
			k, err := keyBetween(a, c)
			if err != nil {
				return nil, err
			}
			out[i] = k
			c = k
		}
		return out, nil
	}
	mid := n / 2
	c, err := keyBetween(a, b)
	if err != nil {
		return nil, err
	}
	left, err := keysBetween(a, c, mid)
	if err != nil {
		return nil, err
	}
	right, err := keysBetween(c, b, n-mid-1)
	if err != nil {
		return nil, err
	}
	return append(append(left, c), right...), nil
}

// syncIndices makes every element's Index valid and strictly increasing in slice order, changing as
// few as possible, like Excalidraw's syncInvalidIndices: a key is kept when it is valid and lies
// strictly between the nearest kept key before it and the next valid key after it; each run of
// other elements gets fresh keys between its kept neighbours. It returns the positions it changed.
func syncIndices(idx []string) (changed []int) {
	n := len(idx)
	keep := make([]bool, n)
	prev := ""
	for i := range n {
		k := idx[i]
		if validateKey(k) != nil || (prev != "" && k <= prev) {
			continue
		}
		// A key above the next usable key would force everything after it to be renumbered: drop
		// it instead (Excalidraw keeps it and renumbers the rest; both give a valid order, this
		// changes fewer elements). Of two equal keys the first is kept, as Excalidraw does.
		next := ""
		for j := i + 1; j < n; j++ {
			if validateKey(idx[j]) == nil && (prev == "" || idx[j] > prev) {
				next = idx[j]
				break
			}
		}
		if next != "" && k > next {
			continue
		}
		keep[i] = true
		prev = k
	}
	for i := 0; i < n; {
		if keep[i] {
			i++
			continue
		}
		j := i
		for j < n && !keep[j] {
			j++
		}
		lo, hi := "", ""
		if i > 0 {
			lo = idx[i-1]
		}
		if j < n {
			hi = idx[j]
		}
		keys, err := keysBetween(lo, hi, j-i)
		if err != nil {
			// Unreachable with valid, increasing bounds; fall back to renumbering everything.
			all, _ := keysBetween("", "", n)
			copy(idx, all)
			changed = changed[:0]
			for k := range n {
				changed = append(changed, k)
			}
			return changed
		}
		for k := i; k < j; k++ {
			idx[k] = keys[k-i]
			changed = append(changed, k)
		}
		i = j
	}
	return changed
}
