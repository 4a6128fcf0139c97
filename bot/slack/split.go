package slack

import (
	"strings"
	"unicode/utf8"

	"github.com/excalibot/excalibot/internal/clip"
)

// Slack's limits on a message's text. A section holds 3 000 characters; a message's text 40 000;
// its blocks, though each is within its limit, about 13 000 in all (more is refused with
// msg_blocks_too_long, undocumented), so a message of sections stops short of that.
const (
	maxSectionText = 3000
	maxMessageText = 39000
	maxBlocksText  = 12000
	maxSections    = 45 // of Slack's 50 blocks, room left for the buttons
)

// messageParts is the reply text as the messages that carry it, each message its texts: with
// links (blocks set) sections of at most maxSectionText, up to maxBlocksText a message; without,
// one plain text of at most maxMessageText. Text within those limits is one message as it is; a
// longer one is cut between paragraphs, lines or words where it can (splitText), and nothing
// but the whitespace at a cut is lost. With links there is always a message, for the buttons.
func messageParts(text string, blocks bool) [][]string {
	var out [][]string
	if !blocks {
		for _, p := range splitText(text, maxMessageText) {
			out = append(out, []string{p})
		}
		return out
	}
	var cur []string
	n := 0
	for _, p := range splitText(text, maxSectionText) {
		l := utf8.RuneCountInString(p)
		if len(cur) > 0 && (n+l > maxBlocksText || len(cur) == maxSections) {
			out, cur, n = append(out, cur), nil, 0
		}
		cur, n = append(cur, p), n+l
	}
	return append(out, cur)
}

// splitText cuts s into parts of at most n characters: at the last paragraph break in the
// part's second half, else the last line break there, else the last space there (a break near
// the start would leave a tiny part); without any, at n characters, never inside an escape
// ("&amp;") or a UTF-8 sequence. The whitespace at a cut is dropped. s within n characters is
// the one part as it is; "" is none.
func splitText(s string, n int) []string {
	var out []string
	for utf8.RuneCountInString(s) > n {
		head := s[:runeOffset(s, n)]
		cut := -1
		for _, sep := range []string{"\n\n", "\n", " "} {
			if i := strings.LastIndex(head, sep); i > len(head)/2 {
				cut = i
				break
			}
		}
		if cut < 0 {
			cut = len(head)
			if i := strings.LastIndex(head, "&"); i > 0 && !strings.Contains(head[i:], ";") {
				cut = i
			}
		}
		if part := strings.TrimRight(s[:cut], " \t\n"); part != "" {
			out = append(out, part)
		}
		s = strings.TrimLeft(s[cut:], " \t\n")
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// runeOffset is the byte offset of s's nth character (len(s) when s is shorter).
func runeOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// escapeText escapes the three characters Slack's message text reserves.
func escapeText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// truncate cuts s to at most n characters, never inside an escape or a UTF-8 sequence.
func truncate(s string, n int) string {
	cut := clip.Runes(s, n)
	if cut == s {
		return s
	}
	cut = strings.TrimSuffix(cut, "…")
	if i := strings.LastIndex(cut, "&"); i >= 0 && !strings.Contains(cut[i:], ";") {
		cut = cut[:i]
	}
	return cut + "…"
}
