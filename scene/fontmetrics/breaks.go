package fontmetrics

import "strings"

// The character classes of textWrapping.ts (0.18.1). COMMON.OPENING and
// COMMON.CLOSING are regex sources spliced into character classes, so their
// backslashes escape and the classes hold just these characters.
const (
	commonOpening = "<([{"
	commonClosing = ">)]}.,:;!?…/"
	cjkCharExtra  = "｀＇＾〃〰〆＃＆＊＋－ー／＼＝｜￤〒￢￣"
	cjkOpening    = "（［｛〈《｟｢「『【〖〔〘〚＜〝"
	cjkClosing    = "）］｝〉》｠｣」』】〗〕〙〛＞。．，、〟‥？！：；・〜〞"
	cjkCurrency   = "￥￦￡￠＄"
)

func in(r rune, set string) bool { return strings.ContainsRune(set, r) }

func isCJKChar(r rune) bool {
	return inTable(r, tabHan) || inTable(r, tabHiragana) || inTable(r, tabKatakana) ||
		inTable(r, tabHangul) || in(r, cjkCharExtra)
}

// breakAt reports whether one of the zero-width rules of
// getLineBreakRegexAdvanced matches between rs[q-1] and rs[q] (0 < q < len).
func breakAt(rs []rune, q int) bool {
	prev, next := rs[q-1], rs[q]
	switch {
	// Break.Before(WHITESPACE), Break.After(WHITESPACE, HYPHEN)
	case isJSSpace(next), isJSSpace(prev) || prev == '-':
		return true
	// Break.Before(CJK.CHAR, CJK.CURRENCY).NotPrecededBy(COMMON.OPENING, CJK.OPENING)
	case (isCJKChar(next) || in(next, cjkCurrency)) && !in(prev, commonOpening) && !in(prev, cjkOpening):
		return true
	// Break.After(CJK.CHAR).NotFollowedBy(COMMON.HYPHEN, COMMON.CLOSING, CJK.CLOSING)
	case isCJKChar(prev) && next != '-' && !in(next, commonClosing) && !in(next, cjkClosing):
		return true
	// Break.BeforeMany(CJK.OPENING).NotPrecededBy(COMMON.OPENING)
	case in(next, cjkOpening) && !in(prev, cjkOpening) && !in(prev, commonOpening):
		return true
	// Break.AfterMany(CJK.CLOSING).NotFollowedBy(COMMON.CLOSING)
	case in(prev, cjkClosing) && !in(next, cjkClosing) && !in(next, commonClosing):
		return true
	// Break.AfterMany(COMMON.CLOSING).FollowedBy(COMMON.OPENING)
	case in(prev, commonClosing) && !in(next, commonClosing) && in(next, commonOpening):
		return true
	}
	return false
}

// emojiAt returns the end of the emoji sequence that getEmojiRegexUnicode
// matches at rs[q], or q when none does:
//
//	FLAG | MOST JOINER (ZWJ (FLAG | ANY JOINER))*
//
// FLAG is two regional indicators; MOST an Extended_Pictographic or
// Emoji_Presentation character; ANY any Emoji character; JOINER an optional
// skin tone, VS16 with an optional keycap, or a tag sequence.
func emojiAt(rs []rune, q int) int {
	if e := flagAt(rs, q); e > q {
		return e
	}
	if q >= len(rs) || !(inTable(rs[q], tabExtPict) || inTable(rs[q], tabEmojiPres)) {
		return q
	}
	e := joinerAt(rs, q+1)
	for e < len(rs) && rs[e] == 0x200D {
		if f := flagAt(rs, e+1); f > e+1 {
			e = f
			continue
		}
		if e+1 < len(rs) && inTable(rs[e+1], tabEmoji) {
			e = joinerAt(rs, e+2)
			continue
		}
		break
	}
	return e
}

func flagAt(rs []rune, q int) int {
	if q+1 < len(rs) && inTable(rs[q], tabRI) && inTable(rs[q+1], tabRI) {
		return q + 2
	}
	return q
}

// joinerAt matches the optional EMOJI.JOINER at rs[q] and returns its end.
func joinerAt(rs []rune, q int) int {
	if q >= len(rs) {
		return q
	}
	switch r := rs[q]; {
	case inTable(r, tabEmojiMod):
		return q + 1
	case r == 0xFE0F:
		if q+1 < len(rs) && rs[q+1] == 0x20E3 {
			return q + 2
		}
		return q + 1
	case r >= 0xE0020 && r <= 0xE007E:
		e := q
		for e < len(rs) && rs[e] >= 0xE0020 && rs[e] <= 0xE007E {
			e++
		}
		if e < len(rs) && rs[e] == 0xE007F {
			return e + 1
		}
	}
	return q
}

// containsEmoji is getEmojiRegex().test(word): an emoji sequence anywhere.
func containsEmoji(rs []rune) bool {
	for q := range rs {
		if emojiAt(rs, q) > q {
			return true
		}
	}
	return false
}
