package telegram

import (
	"strings"
	"unicode/utf16"
)

// captionOf lays out a picture's caption from the reply's text (the summary, with any links that
// could not be buttons) and its alt text. The summary comes first: it says what changed. The alt
// text describes the picture for those who cannot see it (Telegram has no alt text of its own; a
// screen reader reads the caption), so it follows the summary after a blank line, in as many of
// its sentences as fit the 1 024-character limit, or alone when there is no summary. A summary too
// long for a caption goes on in a message of its own (rest), and the alt text whole at its end.
func captionOf(text, alt string) (caption, rest string) {
	alt = strings.TrimSpace(alt)
	text = strings.TrimSpace(text)
	if text == "" {
		return fitSentences(alt, maxCaption, true), ""
	}
	if units(text) > maxCaption {
		caption, rest = split(text, maxCaption)
		return caption, joinParas(rest, alt)
	}
	room := maxCaption - units(text) - 2 // the blank line
	return joinParas(text, fitSentences(alt, room, false)), ""
}

// fitSentences is the longest run of s's leading sentences within n UTF-16 units. When not even
// the first fits, it is "", or with cut the first words that fit, ended by "…".
func fitSentences(s string, n int, cut bool) string {
	if units(s) <= n {
		return s
	}
	if n <= 1 {
		return ""
	}
	fit := ""
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c == '.' || c == '!' || c == '?') && (i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\n') {
			if units(s[:i+1]) > n {
				break
			}
			fit = s[:i+1]
		}
	}
	if fit != "" || !cut {
		return fit
	}
	head, _ := split(s, n-1)
	return head + "…"
}

// joinParas joins non-empty paragraphs with a blank line.
func joinParas(ps ...string) string {
	var keep []string
	for _, p := range ps {
		if p = strings.TrimSpace(p); p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, "\n\n")
}

// units is the length of s as Telegram counts it.
func units(s string) int { return len(utf16.Encode([]rune(s))) }
