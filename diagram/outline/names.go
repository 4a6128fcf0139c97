package outline

import (
	"fmt"
	"strings"
	"unicode"
)

// FileBase is the name a diagram's files take at a revision, without the extension: its title
// in lower case with dashes ("deploy-pipeline-r3"), or "diagram-r3" when it has none. The chat's
// uploads and the editor's downloads use it, so a file has one name wherever it came from.
// Letters of any script are kept; other characters become dashes.
func FileBase(title string, rev int64) string {
	var sb strings.Builder
	dash := false
	n := 0
	for _, r := range strings.ToLower(title) {
		if n >= maxNameRunes {
			break
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && sb.Len() > 0 {
				sb.WriteByte('-')
				n++
			}
			sb.WriteRune(r)
			n++
			dash = false
			continue
		}
		dash = true
	}
	base := strings.Trim(sb.String(), "-")
	if base == "" {
		base = "diagram"
	}
	if rev <= 0 {
		return base
	}
	return fmt.Sprintf("%s-r%d", base, rev)
}

// maxNameRunes bounds the title part of a file name: long enough to say what the diagram is,
// short enough for a phone's file list.
const maxNameRunes = 40
