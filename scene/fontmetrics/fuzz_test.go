package fontmetrics

import (
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

var fuzzSeeds = []string{
	"Load balancer", "Hello(한글) world", "a  b\t\tc  ", "👨\u200d👩\u200d👧🇨🇿👍🏽 x", "e\u0301\u0301",
	"日本語のテキストです。", "Пользователь-сервер", "x\r\ny\u2028z", "", " ", "-", "((((", "\U000E0067\U000E007F",
}

// FuzzTokens: the tokens of a line always spell the NFC line back.
func FuzzTokens(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if !utf8.ValidString(line) {
			t.Skip()
		}
		toks := Tokens(line)
		if got, want := strings.Join(toks, ""), norm.NFC.String(line); got != want {
			t.Fatalf("Tokens(%q) = %q, which spells %q, want %q", line, toks, got, want)
		}
		for _, tok := range toks {
			if tok == "" {
				t.Fatalf("Tokens(%q) has an empty token", line)
			}
		}
	})
}

// FuzzWrap: wrapping only moves line breaks and drops whitespace at them; it
// never loses or invents other characters.
func FuzzWrap(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, 40.0)
	}
	f.Fuzz(func(t *testing.T, text string, maxWidth float64) {
		if !utf8.ValidString(text) {
			t.Skip()
		}
		got := Wrap(Excalifont, 20, text, maxWidth)
		ink := func(s string) string {
			return norm.NFC.String(strings.Map(func(r rune) rune {
				if isJSSpace(r) {
					return -1
				}
				return r
			}, s))
		}
		if ink(got) != ink(text) {
			t.Fatalf("Wrap(%q, %v) = %q: non-space characters changed", text, maxWidth, got)
		}
	})
}
