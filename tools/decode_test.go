package tools

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClosest(t *testing.T) {
	ids := []string{"ceo", "cto", "cfo", "coo", "engineering", "a1", "a2", "a10"}
	tests := []struct {
		in   string
		n    int
		want []string
	}{
		{"cxo", 3, []string{"ceo", "cfo", "coo"}},
		{"CTO", 1, []string{"cto"}},
		{"engineer", 1, []string{"engineering"}},
		{"a3", 2, []string{"a1", "a2"}},
		{"zebra-crossing", 3, []string{}},
	}
	for _, tt := range tests {
		got := closest(tt.in, ids, tt.n)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("closest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"résumé", "resume", 2}} {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestDecodeFields(t *testing.T) {
	tests := []struct {
		args string
		want []string // problems, in order
	}{
		{`{"x":"12px"}`, []string{`x: want a number like 120, got a string "12px"`}},
		{`{"x":true}`, []string{"x: want a number like 120, got a boolean true"}},
		{`{"ids":[1,"b",{"c":1}]}`, []string{`ids[2]: want a string id, got an object {"c":1}`}},
		{`{"ids":{"a":1}}`, []string{`ids: want a list of ids like ["r1", "r2"], got an object {"a":1}`}},
		{`{"locked":"yes"}`, []string{`locked: want true or false, got a string "yes"`}},
		{`{"zz":1}`, []string{"zz: unknown field; known fields: x, ids, locked"}},
		{`{"lockd":true}`, []string{`lockd: unknown field (did you mean "locked"?)`}},
	}
	for _, tt := range tests {
		p := &problems{}
		o, ok := parseArgs(json.RawMessage(tt.args), p)
		if !ok {
			t.Fatalf("%s: not parsed: %v", tt.args, p)
		}
		o.num("x")
		o.strList("ids")
		o.boolean("locked")
		o.finish("x", "ids", "locked")
		if !reflect.DeepEqual(p.list, tt.want) {
			t.Errorf("%s: problems %q, want %q", tt.args, p.list, tt.want)
		}
	}
}

func TestDecodeAccepts(t *testing.T) {
	p := &problems{}
	o, _ := parseArgs(json.RawMessage(`{"x":"120","id":7,"ids":"r1","s":"caf\u00e9 \"q\""}`), p)
	if x, _ := o.num("x"); x != 120 {
		t.Errorf("numeric string: got %v", x)
	}
	if id, _ := o.str("id"); id != "7" {
		t.Errorf("number as id: got %q", id)
	}
	if ids, _ := o.strList("ids"); !reflect.DeepEqual(ids, []string{"r1"}) {
		t.Errorf("single id as list: got %q", ids)
	}
	if s, _ := o.str("s"); s != `café "q"` {
		t.Errorf("escaped string: got %q", s)
	}
	if !p.ok() {
		t.Errorf("unexpected problems: %v", p)
	}
}

func TestProblemsCap(t *testing.T) {
	p := &problems{}
	for i := 0; i < maxProblems+3; i++ {
		p.add("f", "bad %d", i)
	}
	if got := p.Error(); !strings.HasSuffix(got, "… and 3 more problems") || strings.Count(got, "\n") != maxProblems {
		t.Errorf("capped list:\n%s", got)
	}
}

// TestDescribeJSONCutsWholeRunes: a long wrong value is shortened between runes, so the refusal
// the model reads stays valid UTF-8.
func TestDescribeJSONCutsWholeRunes(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{`"` + strings.Repeat("a", 38) + `"`, `a string "` + strings.Repeat("a", 38) + `"`},
		{`"` + strings.Repeat("é", 50) + `"`, `a string "` + strings.Repeat("é", 36) + "…"},
	}
	for _, tt := range tests {
		got := describeJSON(json.RawMessage(tt.in))
		if got != tt.want || !utf8.ValidString(got) {
			t.Errorf("describeJSON(%s): got %q, want %q", tt.in, got, tt.want)
		}
	}
}
