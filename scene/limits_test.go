package scene

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/excalibot/excalibot/internal/corpusdir"
)

// elems joins element objects into a document.
func elems(parts ...string) string {
	return `{"type":"excalidraw","version":2,"elements":[` + strings.Join(parts, ",") + `],"appState":{},"files":{}}`
}

func repeat(n int, f func(i int) string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func box(i int) string { return fmt.Sprintf(`{"id":"b%d","type":"rectangle"}`, i) }
func gone(i int) string {
	return fmt.Sprintf(`{"id":"d%d","type":"rectangle","isDeleted":true}`, i)
}

func TestLimitsCheck(t *testing.T) {
	small := Limits{MaxBytes: 1 << 20, MaxElements: 3, MaxTextLength: 5}
	for _, tc := range []struct {
		name string
		doc  string
		lim  Limits
		cap  Cap // "" when the document passes
		got  int
		id   string
	}{
		{"within", elems(box(1), box(2), box(3)), small, "", 0, ""},
		{"empty", elems(), small, "", 0, ""},
		{"too many", elems(repeat(4, box)...), small, CapElements, 4, ""},
		{"deleted do not count", elems(append(repeat(3, box), repeat(3, gone)...)...), small, "", 0, ""},
		{"too many deleted", elems(repeat(4, gone)...), small, CapDeleted, 4, ""},
		{"isDeleted false counts", elems(append(repeat(3, box), `{"id":"x","type":"rectangle","isDeleted":false}`)...), small, CapElements, 4, ""},
		{"last isDeleted wins", elems(append(repeat(3, box), `{"id":"x","isDeleted":true,"type":"rectangle","isDeleted":false}`)...), small, CapElements, 4, ""},
		{"bytes", elems(box(1)), Limits{MaxBytes: 40}, CapBytes, len(elems(box(1))), ""},
		{"default elements", elems(repeat(501, box)...), Limits{}, CapElements, 501, ""},
		{"text within", elems(`{"id":"t","type":"text","text":"abcde"}`), small, "", 0, ""},
		{"text too long", elems(`{"id":"t","type":"text","text":"abcdef"}`), small, CapText, 6, "t"},
		{"type after text", elems(`{"text":"abcdef","id":"t","type":"text"}`), small, CapText, 6, "t"},
		{"first long text named", elems(`{"id":"a","type":"text","text":"abcdefg"}`, `{"id":"b","type":"text","text":"abcdefgh"}`), small, CapText, 7, "a"},
		{"escapes are one character", elems(`{"id":"t","type":"text","text":"\u00e9\n\"\\\/"}`), small, "", 0, ""},
		{"surrogate pair is one", elems(`{"id":"t","type":"text","text":"\ud83d\ude00\ud83d\ude00abc"}`), small, "", 0, ""},
		{"lone surrogates each one", elems(`{"id":"t","type":"text","text":"\ud83d\ud83dabcd"}`), small, CapText, 6, "t"},
		{"UTF-8 counts characters", elems(`{"id":"t","type":"text","text":"日本語の字"}`), small, "", 0, ""},
		{"UTF-8 too long", elems(`{"id":"t","type":"text","text":"日本語の文字"}`), small, CapText, 6, "t"},
		{"deleted text not checked", elems(`{"id":"t","type":"text","isDeleted":true,"text":"abcdefghij"}`), small, "", 0, ""},
		{"text of a box not checked", elems(`{"id":"r","type":"rectangle","text":"abcdefghij"}`), small, "", 0, ""},
		{"escaped key", elems(`{"id":"t","type":"text","te\u0078t":"abcdef"}`), small, CapText, 6, "t"},
		{"escaped type", elems(`{"id":"t","type":"te\u0078t","text":"abcdef"}`), small, CapText, 6, "t"},
		{"escaped id", elems(`{"id":"\u0074","type":"text","text":"abcdef"}`), small, CapText, 6, "t"},
		{"duplicate text keeps the longer", elems(`{"id":"t","type":"text","text":"abcdef","text":"a"}`), small, CapText, 6, "t"},
		{"duplicate elements: larger counts", `{"type":"excalidraw","elements":[` + strings.Join(repeat(4, box), ",") + `],"elements":[]}`, small, CapElements, 4, ""},
		{"escaped elements key", `{"type":"excalidraw","\u0065lements":[` + strings.Join(repeat(4, box), ",") + `]}`, small, CapElements, 4, ""},
		{"nested elements not counted", elems(`{"id":"a","type":"rectangle","customData":{"elements":[1,2,3,4,5]}}`), small, "", 0, ""},
		{"strings with brackets", elems(`{"id":"a\"}],{","type":"text","text":"}]\"[{","x":[1,{"y":"]"}]}`, box(2)), small, "", 0, ""},
		{"whitespace", "{ \"elements\" :\n [ {\"id\" : \"a\" , \"isDeleted\" : true } ,\n" + box(1) + " ] }", Limits{MaxElements: 1}, "", 0, ""},
		{"not JSON passes to Decode", `<html>`, small, "", 0, ""},
		{"not an object", `[1,2,3,4,5]`, small, "", 0, ""},
		{"truncated", elems(repeat(4, box)...)[:60], small, "", 0, ""},
		{"elements not objects count", elems("1", "2", "3", "null"), small, CapElements, 4, ""},
	} {
		err := tc.lim.Check([]byte(tc.doc))
		var over *OverCapError
		switch {
		case tc.cap == "" && err != nil:
			t.Errorf("%s: got %v, want no error", tc.name, err)
		case tc.cap == "":
		case !errors.As(err, &over):
			t.Errorf("%s: got %v, want an *OverCapError for %s", tc.name, err, tc.cap)
		case over.Cap != tc.cap || over.Got != tc.got || over.ID != tc.id:
			t.Errorf("%s: got %+v, want cap %s, got %d, id %q", tc.name, *over, tc.cap, tc.got, tc.id)
		}
	}
}

func TestOverCapMessages(t *testing.T) {
	for _, tc := range []struct {
		err  *OverCapError
		want string
	}{
		{&OverCapError{Cap: CapBytes, Got: 6 << 20, Max: 5 << 20}, "the diagram is 6.0 MB, over the 5.0 MB limit"},
		{&OverCapError{Cap: CapElements, Got: 100000, Max: 500}, "the diagram has 100000 elements, over the limit of 500"},
		{&OverCapError{Cap: CapDeleted, Got: 501, Max: 500}, "the diagram keeps 501 deleted elements, over the limit of 500"},
		{&OverCapError{Cap: CapText, Got: 6000, Max: 5000, ID: "t1"}, `the text of element "t1" is 6000 characters long, over the limit of 5000`},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.err.Cap, got, tc.want)
		}
	}
}

// TestLimitsAgreeWithDecode checks the scan against what Decode reads, on the real files.
func TestLimitsAgreeWithDecode(t *testing.T) {
	files := corpusdir.Optional()
	more, _ := filepath.Glob("testdata/*.excalidraw")
	files = append(files, more...)
	if len(files) < 2 {
		t.Fatalf("found %d test files", len(files))
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := agreeWithDecode(data); err != nil {
			t.Errorf("%s: %v", filepath.Base(p), err)
		}
	}
}

// FuzzLimitsCheck: for every input Decode accepts, Check never counts fewer elements, deleted
// elements or characters than Decode reads, and counts exactly as many when no key is repeated.
func FuzzLimitsCheck(f *testing.F) {
	for _, s := range []string{
		elems(box(1), gone(2), `{"id":"t","type":"text","text":"ab\u00e9"}`),
		elems(`{"id":"t","type":"text","text":"\ud83d\ude00\ud83dx","isDeleted":false}`),
		`{"type":"excalidraw","elements":[{"id":"a","type":"text","text":"x","containerId":"a"}]}`,
		`{"type":"excalidraw","elements":[{"id":"a","type":"rectangle"}],"elements":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := agreeWithDecode(data); err != nil {
			t.Fatal(err)
		}
	})
}

func agreeWithDecode(data []byte) error {
	s, err := Decode(data)
	if err != nil {
		return nil
	}
	live, deleted, text := 0, 0, 0
	for _, e := range s.Elements() {
		if e.IsDeleted {
			deleted++
			continue
		}
		live++
		if e.Type == Text {
			text = max(text, utf8.RuneCountInString(e.Text))
		}
	}
	all := Limits{MaxBytes: len(data), MaxElements: max(live, deleted, 1), MaxTextLength: max(text, 1)}
	if !repeatsKeys(data) {
		if err := all.Check(data); err != nil {
			return fmt.Errorf("decoded %d drawn, %d deleted, longest text %d; Check with those limits: %v", live, deleted, text, err)
		}
	}
	for _, tc := range []struct {
		n   int
		lim Limits
		cap Cap
	}{
		{live, Limits{MaxBytes: len(data), MaxElements: live - 1, MaxTextLength: 1 << 30}, CapElements},
		{deleted, Limits{MaxBytes: len(data), MaxElements: deleted - 1, MaxTextLength: 1 << 30}, CapDeleted},
		{text, Limits{MaxBytes: len(data), MaxElements: 1 << 30, MaxTextLength: text - 1}, CapText},
	} {
		if tc.n < 2 {
			continue
		}
		// Another cap may come first (both element caps share MaxElements); the one tested
		// must count at least what Decode read.
		var over *OverCapError
		err := tc.lim.Check(data)
		if !errors.As(err, &over) || (over.Cap == tc.cap && over.Got < tc.n) {
			return fmt.Errorf("decoded %d %s; Check with a limit of one less: %v", tc.n, tc.cap, err)
		}
	}
	return nil
}

// repeatsKeys reports whether any object in data has a key twice (Decode keeps the last, Check
// the larger figure).
func repeatsKeys(data []byte) bool {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	type frame struct {
		keys   map[string]bool
		object bool
		key    bool // the next string is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF || err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.key {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].object {
					stack[len(stack)-1].key = true
				}
				continue
			}
			k := tok.(string)
			if top.keys[k] {
				return true
			}
			top.keys[k] = true
			top.key = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, object: true, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].key = true
		}
	}
}
