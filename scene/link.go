package scene

import (
	"encoding/json"
	"net/url"
	"strings"
)

// MaxLinkLength bounds an element's link. Real links are far shorter; a long one is a payload.
const MaxLinkLength = 2048

// SafeLink returns link when a browser would open it as an ordinary web page, and "" otherwise.
// Element links (and embeddable sources) come from uploaded files, the browser editor and,
// indirectly, a model that read an attacker's message, and they are clickable in every copy of
// the diagram; so only absolute http and https URLs with a host and no user name are kept.
// javascript:, data:, file:, vbscript: and the rest are dropped, as are links with control
// characters or spaces, which browsers strip ("java\tscript:" runs as javascript:).
func SafeLink(link string) string {
	link = strings.TrimSpace(link)
	if link == "" || len(link) > MaxLinkLength {
		return ""
	}
	for _, r := range link {
		if r <= ' ' || r == 0x7f || r == '\\' {
			return ""
		}
	}
	u, err := url.Parse(link)
	if err != nil || u.Host == "" || u.User != nil || u.Opaque != "" {
		return ""
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return ""
	}
	return link
}

// safeFiles keeps the image files whose content is inline (a data:image/… URL), dropping
// entries that would make a browser or the renderer fetch a URL, and entries that are not
// objects at all.
func safeFiles(files map[string]json.RawMessage) {
	for id, raw := range files {
		var f struct {
			DataURL string `json:"dataURL"`
		}
		if json.Unmarshal(raw, &f) != nil || !strings.HasPrefix(strings.ToLower(f.DataURL), "data:image/") {
			delete(files, id)
		}
	}
}
