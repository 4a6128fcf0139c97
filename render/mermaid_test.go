package render

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/excalibot/excalibot/diagram/mermaid"
	"github.com/excalibot/excalibot/internal/waitfor"
	"github.com/excalibot/excalibot/scene"
)

// docBlocks returns the ```mermaid blocks of a testdata file, with the line each starts on.
func docBlocks(t *testing.T, path string) []docBlock {
	t.Helper()
	var out []docBlock
	var cur *docBlock
	for i, l := range strings.Split(string(readFile(t, path)), "\n") {
		switch {
		case cur == nil && strings.TrimSpace(l) == "```mermaid":
			cur = &docBlock{line: i + 1}
		case cur != nil && strings.TrimSpace(l) == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.src += l + "\n"
		}
	}
	if cur != nil {
		t.Fatalf("%s: block at line %d has no closing fence", path, cur.line)
	}
	return out
}

type docBlock struct {
	line int
	src  string
}

type elem struct {
	ID            string `json:"id"`
	Type          string `json:"type"`
	Text          string `json:"text"`
	OriginalText  string `json:"originalText"`
	ContainerID   string `json:"containerId"`
	BoundElements []struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	} `json:"boundElements"`
	StartBinding *struct {
		ElementID string `json:"elementId"`
	} `json:"startBinding"`
	EndBinding *struct {
		ElementID string `json:"elementId"`
	} `json:"endBinding"`
	FileID string `json:"fileId"`
}

func elems(t *testing.T, res MermaidResult) []elem {
	t.Helper()
	out := make([]elem, len(res.Elements))
	for i, raw := range res.Elements {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			t.Fatalf("element %d: %v", i, err)
		}
	}
	return out
}

// docExceptions are the documentation examples that do not become plain shapes, and why.
var docExceptions = map[string]struct {
	image bool   // mermaid-to-excalidraw 2.2.2's class parser fails on it; Excalidraw inserts an image too
	fix   string // written in syntax newer than the bundled Mermaid 11.12.3; repaired
}{
	"class/line61":  {image: true}, // class names in backticks
	"class/line150": {image: true}, // lollipop interface
	"class/line155": {image: true}, // lollipop interfaces
	"class/line185": {fix: "<<annotation>>"},
}

// TestMermaidDocExamples converts every flowchart, sequence and class example of Mermaid's
// documentation (testdata/mermaid/*.md) without error: each becomes shapes (but for the listed
// image fallbacks), every label sits in a container that lists it and every arrow label in the
// middle of its arrow, off the nodes, and the scene package's file of it is one Excalidraw's
// restore() leaves as it is.
func TestMermaidDocExamples(t *testing.T) {
	r := shared(t)
	files, _ := filepath.Glob("testdata/mermaid/*.md")
	if len(files) < 3 {
		t.Fatalf("found %d example files, want flowchart, sequence and class", len(files))
	}
	total := 0
	for _, f := range files {
		kind := strings.TrimSuffix(filepath.Base(f), ".md")
		blocks := docBlocks(t, f)
		for _, b := range blocks {
			total++
			name := fmt.Sprintf("%s/line%d", kind, b.line)
			t.Run(name, func(t *testing.T) {
				res, err := r.Mermaid(testCtx(t), b.src)
				if err != nil {
					t.Fatalf("%s\n%v", b.src, err)
				}
				want := docExceptions[name]
				if res.Image != want.image {
					t.Fatalf("%s\nimage = %v (type %q), want %v", b.src, res.Image, res.Type, want.image)
				}
				if fixes := strings.Join(res.Fixes, "; "); want.fix == "" && fixes != "" || !strings.Contains(fixes, want.fix) {
					t.Errorf("fixes %q, want %q", fixes, want.fix)
				}
				checkBound(t, elems(t, res))
				if st := measure(melems(t, res.Elements)); st.Markup+st.OffArrow+st.LabelsOnNodes+st.LabelsOnLabels+st.FarEnds > 0 || st.MidLabels != st.Labels {
					t.Errorf("measurements %+v: want no markup, every label on the middle half of its arrow and on no node or label, no end off its shape", st)
				}
				// As a scene (package scene loads it like a file), Excalidraw's restore() changes
				// nothing: no element dropped, no binding repaired, no text moved over 1 px.
				raw, err := json.Marshal(map[string]any{"type": "excalidraw", "version": 2, "elements": res.Elements, "files": res.Files})
				if err != nil {
					t.Fatal(err)
				}
				sc, err := scene.Decode(raw)
				if err != nil {
					t.Fatalf("scene.Decode: %v", err)
				}
				doc, err := sc.Encode()
				if err != nil {
					t.Fatal(err)
				}
				rep, err := r.Check(testCtx(t), doc)
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				if !rep.Clean(1) {
					t.Errorf("Excalidraw's restore changes the scene:\n%s", rep)
				}
			})
		}
	}
	t.Logf("%d documentation examples", total)
}

// checkBound checks that containers and labels, arrows and their shapes, point at each other.
func checkBound(t *testing.T, es []elem) {
	t.Helper()
	byID := map[string]elem{}
	for _, e := range es {
		if _, dup := byID[e.ID]; dup {
			t.Errorf("duplicate id %q", e.ID)
		}
		byID[e.ID] = e
	}
	lists := func(c elem, id string) bool {
		for _, b := range c.BoundElements {
			if b.ID == id {
				return true
			}
		}
		return false
	}
	for _, e := range es {
		if e.ContainerID != "" {
			c, ok := byID[e.ContainerID]
			if !ok || !lists(c, e.ID) {
				t.Errorf("text %q: container %q missing or does not list it", e.Text, e.ContainerID)
			}
		}
		for _, b := range []*struct {
			ElementID string `json:"elementId"`
		}{e.StartBinding, e.EndBinding} {
			if b == nil {
				continue
			}
			if c, ok := byID[b.ElementID]; !ok || !lists(c, e.ID) {
				t.Errorf("arrow %q: bound shape %q missing or does not list it", e.ID, b.ElementID)
			}
		}
	}
}

func TestMermaidFlowchartShapes(t *testing.T) {
	r := shared(t)
	res, err := r.Mermaid(testCtx(t), "flowchart LR\n  A[Start] -->|go| B{Choice}\n  B --> C(Done)\n")
	if err != nil {
		t.Fatal(err)
	}
	if res.Type != "flowchart-v2" || res.Image {
		t.Errorf("type %q image %v, want flowchart-v2 shapes", res.Type, res.Image)
	}
	got := map[string]string{}
	labels := map[string]string{}
	arrows := 0
	for _, e := range elems(t, res) {
		got[e.ID] = e.Type
		if e.ContainerID != "" {
			labels[e.ContainerID] = e.Text
		}
		if e.Type == "arrow" && e.StartBinding != nil && e.EndBinding != nil {
			arrows++
		}
	}
	for id, typ := range map[string]string{"A": "rectangle", "B": "diamond", "C": "rectangle"} {
		if got[id] != typ {
			t.Errorf("node %s: type %q, want %q", id, got[id], typ)
		}
	}
	for id, text := range map[string]string{"A": "Start", "B": "Choice", "C": "Done"} {
		if labels[id] != text {
			t.Errorf("label of %s = %q, want %q", id, labels[id], text)
		}
	}
	if arrows != 2 {
		t.Errorf("%d arrows bound at both ends, want 2", arrows)
	}
}

func TestMermaidSyntaxErrors(t *testing.T) {
	r := shared(t)
	for _, tc := range []struct {
		name, src string
		line      int
		lineText  string
		hint      string // part of the hint
		msg       string // part of the message
	}{
		{"unclosed label", "flowchart TD\n  A[Start --> B\n  B --> C\n", 2, "A[Start --> B", "bracket", ""},
		// Mermaid drops comment lines and front matter before parsing and counts what is left.
		{"after comment lines", "sequenceDiagram\n%% who talks\n  Alice->>Bob: hi\n\n%% the reply\n  Bob->>Alice hello\n", 6, "Bob->>Alice hello", "colon", "':'"},
		{"after front matter and comments", "---\ntitle: Login\n---\nsequenceDiagram\n  %% greet\n  Alice->>Bob: hi\n\n  %% answer\n  Bob->>Alice hello\n", 9, "Bob->>Alice hello", "colon", ""},
		{"a bracket left over is not guessed", "flowchart TD\n%% a\n%% b\n  A --> B\n  B --> C[[Sub]]]\n  C --> D\n", 5, "B --> C[[Sub]]]", "", ""},
		{"er relation in a flowchart", "flowchart TD\n  %% orders\n  A[Customer] ||--o{ B[Order]\n", 3, "A[Customer] ||--o{ B[Order]", "`erDiagram`", "`||--o{` is a relation of erDiagram, not of flowchart"},
		{"flowchart arrow in an erDiagram", "erDiagram\n  CUSTOMER ||--o{ ORDER : places\n  ORDER --> ITEM : contains\n", 3, "ORDER --> ITEM : contains", "cardinalities", "`-->` is a relation of flowchart"},
		{"class relation in a flowchart", "flowchart LR\n  Animal <|-- Duck\n", 2, "Animal <|-- Duck", "`classDiagram`", "`<|--` is a relation of classDiagram"},
		// Entities a class cannot be named after (a space) are not turned into associations.
		{"er relation in a class diagram", "classDiagram\n  \"Order item\" ||--o{ Duck\n", 2, "\"Order item\" ||--o{ Duck", "`erDiagram`", "not of classDiagram"},
		{"unknown type", "flowchat TD\n  A --> B\n", 0, "", "first line", ""},
		{"fenced, line counted from the message", "Please draw:\n```mermaid\nsequenceDiagram\n  Alice->>Bob hello\n```\n", 4, "Alice->>Bob hello", "colon", ""},
		{"empty", "```mermaid\n```", 0, "", "diagram type", ""},
		{"slack code block, line counted from the message", "Here:\n```sequenceDiagram\n  Alice->>Bob hello\n  Bob->>Alice: hi```", 3, "Alice->>Bob hello", "colon", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Mermaid(testCtx(t), tc.src)
			var me *mermaid.Error
			if !errors.As(err, &me) {
				t.Fatalf("err = %v, want a *mermaid.Error", err)
			}
			if me.Line != tc.line || strings.TrimSpace(me.LineText) != tc.lineText {
				t.Errorf("line %d %q, want %d %q (%v)", me.Line, me.LineText, tc.line, tc.lineText, err)
			}
			if !strings.Contains(me.Hint, tc.hint) {
				t.Errorf("hint %q does not mention %q", me.Hint, tc.hint)
			}
			if !strings.Contains(me.Message, tc.msg) {
				t.Errorf("message %q does not say %q", me.Message, tc.msg)
			}
			if tc.line > 0 && !strings.Contains(err.Error(), strings.TrimSpace(tc.lineText)) {
				t.Errorf("error %q does not quote line %d", err, tc.line)
			}
			t.Log(err)
		})
	}
}

// TestMermaidFixes feeds the mistakes Excalidraw's text-to-diagram repairs (and a few more) and
// expects a diagram with the fix reported.
func TestMermaidFixes(t *testing.T) {
	r := shared(t)
	for _, tc := range []struct {
		name, src, fix string
		fenced         bool
		shows          string // a text the diagram must show
	}{
		{"fence", "```mermaid\nflowchart TD\n  A --> B\n```", "", true, ""},
		{"slack code block", "Here:\n```flowchart TD\n  A --> B```", "", true, ""},
		{"smart quotes", "flowchart TD\n  A[\u201cCall f(x)\u201d] --> B\n", "typographic quotes", false, ""},
		{"keyword case", "sequencediagram\n  Alice->>Bob: hi\n", "keyword", false, ""},
		{"arrowhead after label", "flowchart TD\n  A -->|yes|> B\n", "'>'", false, ""},
		{"missing end", "flowchart TD\n  subgraph one\n  A --> B\n", "'end'", false, ""},
		{"brackets in a label", "flowchart TD\n  A[Call f(x)] --> B\n", "quoted a label", false, ""},
		{"deactivate an inactive participant", "sequenceDiagram\n  Alice->>Bob: hi\n  deactivate Bob\n", "deactivate", false, ""},
		{"zero-width space", "flowchart TD\n  A\u200b --> B\n", "invisible", false, ""},
		{"brackets in an edge label", "flowchart TD\n  A -->|ownerRef <br/> (root only)| B\n", "quoted an edge label", false, "ownerRef\n(root only)"},
		{"erDiagram relations in a class diagram", "classDiagram\n  class User\n  User ||--o{ Order : places\n  Order }|..|| Product : \"contains\"\n", "class associations with their cardinalities", false, "0..*"},
		{"semicolons in messages", "sequenceDiagram\n  A->>B: check; then retry\n  Note over A: one; two\n  B-->>A: ok\n", "#59;", false, "check; then retry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := r.Mermaid(testCtx(t), tc.src)
			if err != nil {
				t.Fatalf("%v", err)
			}
			if res.Fenced != tc.fenced {
				t.Errorf("fenced = %v, want %v", res.Fenced, tc.fenced)
			}
			if tc.fix == "" && len(res.Fixes) > 0 {
				t.Errorf("fixes %v, want none", res.Fixes)
			}
			if tc.fix != "" && !strings.Contains(strings.Join(res.Fixes, "; "), tc.fix) {
				t.Errorf("fixes %v, want one mentioning %q", res.Fixes, tc.fix)
			}
			if len(res.Elements) == 0 || res.Image {
				t.Errorf("%d elements, image %v; want shapes", len(res.Elements), res.Image)
			}
			shown := tc.shows == ""
			for _, e := range elems(t, res) {
				if strings.Contains(e.Text, "#59;") || strings.Contains(e.Text, "<br") {
					t.Errorf("text %q shows what the repair wrote", e.Text)
				}
				shown = shown || e.OriginalText == tc.shows
			}
			if !shown {
				t.Errorf("no text reads %q", tc.shows)
			}
		})
	}
}

// TestMermaidQuoteRepairs: a flowchart label that starts with / or \ or holds brackets is put in
// quotes, keeping its shape's own brackets, and valid shapes on the same line stay as they are.
func TestMermaidQuoteRepairs(t *testing.T) {
	r := shared(t)
	for _, tc := range []struct {
		name, src string
		labels    map[string]string
		types     map[string]string
	}{
		{"a URL path", "flowchart LR\n  A[/login] --> B[Dashboard]\n", map[string]string{"A": "/login", "B": "Dashboard"}, nil},
		{"a Windows path", "flowchart LR\n  A[\\\\server\\share] --> B\n", map[string]string{"A": "\\\\server\\share"}, nil},
		{"brackets in brackets", "flowchart LR\n  A[List[int]] --> B{Is x > [0]?}\n", map[string]string{"A": "List[int]", "B": "Is x > [0]?"}, map[string]string{"B": "diamond"}},
		{"valid shapes kept beside", "flowchart LR\n  A[/login] --> B[(Users [db])] --> C((Done))\n", map[string]string{"A": "/login", "B": "Users [db]", "C": "Done"}, map[string]string{"C": "ellipse"}},
		{"after comments", "flowchart LR\n  %% the entry\n  %% points\n  Public[/public/*<br/>open routes] --> S[Service]\n", map[string]string{"Public": "/public/*\nopen routes"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := r.Mermaid(testCtx(t), tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(res.Fixes, "; "), "quoted a label") {
				t.Errorf("fixes %v, want a quoted label", res.Fixes)
			}
			es := elems(t, res)
			labels, types := map[string]string{}, map[string]string{}
			for _, e := range es {
				types[e.ID] = e.Type
				if e.ContainerID != "" {
					labels[e.ContainerID] = e.OriginalText
				}
			}
			for id, want := range tc.labels {
				if labels[id] != want {
					t.Errorf("label of %s = %q, want %q", id, labels[id], want)
				}
			}
			for id, want := range tc.types {
				if types[id] != want {
					t.Errorf("%s is a %s, want a %s", id, types[id], want)
				}
			}
		})
	}
}

// TestMermaidImageFallback: a type without Excalidraw shapes comes back as one image with its file,
// the way Excalidraw inserts it.
func TestMermaidImageFallback(t *testing.T) {
	r := shared(t)
	res, err := r.Mermaid(testCtx(t), "pie title Pets\n  \"Dogs\" : 386\n  \"Cats\" : 85\n")
	if err != nil {
		t.Fatal(err)
	}
	es := elems(t, res)
	if !res.Image || res.Type != "pie" || len(es) != 1 || es[0].Type != "image" {
		t.Fatalf("image %v type %q elements %d, want one image of a pie", res.Image, res.Type, len(es))
	}
	var f struct {
		MimeType string `json:"mimeType"`
		DataURL  string `json:"dataURL"`
	}
	if err := json.Unmarshal(res.Files[es[0].FileID], &f); err != nil {
		t.Fatalf("file %q: %v", es[0].FileID, err)
	}
	if f.MimeType != "image/svg+xml" || !strings.HasPrefix(f.DataURL, "data:image/svg+xml;base64,") {
		t.Errorf("file %s %.40s, want an SVG data URL", f.MimeType, f.DataURL)
	}
}

// TestMermaidNoOutsideRequests: Mermaid's links, click handlers and image URLs reach nothing
// outside the page. The outside server counts requests; a control tab proves it would see them.
func TestMermaidNoOutsideRequests(t *testing.T) {
	r := shared(t)
	var hits atomic.Int64
	outside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		hits.Add(1)
		t.Logf("outside server got %s %s", req.Method, req.URL)
	}))
	defer outside.Close()
	u := outside.URL
	for _, src := range []string{
		fmt.Sprintf("flowchart TD\n  A[<img src='%s/img.png'>] --> B\n  click A href \"%s/click\"\n  C@{ img: \"%s/shape.png\", label: \"x\" }\n", u, u, u),
		fmt.Sprintf("sequenceDiagram\n  participant Alice\n  link Alice: Wiki @ %s/wiki\n  Alice->>Bob: hi\n", u),
		fmt.Sprintf("flowchart TD\n  A[\"<a href='%s/a'>x</a>\"] --> B\n  style A fill:url(%s/fill)\n", u, u),
		"architecture-beta\n  service db(database)[Database]\n  service api(server)[API]\n  db:L -- R:api\n",
	} {
		_, err := r.Mermaid(testCtx(t), src)
		t.Logf("%q: %v", firstLine(src), err)
	}
	// Real time: Chromium would send a stray request on its own schedule, and nothing tells
	// that it will not; one that slipped through arrives well within this.
	time.Sleep(200 * time.Millisecond)
	if n := hits.Load(); n != 0 {
		t.Fatalf("the outside server got %d requests from the Mermaid page, want 0", n)
	}
}

// TestMermaidAfterChromeRestart: the Mermaid tab comes back when Chromium was killed.
func TestMermaidAfterChromeRestart(t *testing.T) {
	r := own(t, Config{Tabs: 1})
	src := "flowchart TD\n  A --> B\n"
	if _, err := r.Mermaid(testCtx(t), src); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	pid := r.b.pid
	r.mu.Unlock()
	p, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Mermaid(testCtx(t), src); err != nil {
		t.Fatalf("after killing chromium: %v", err)
	}
}

func TestExplain(t *testing.T) {
	for _, tc := range []struct {
		message, line, keyword string
		wantMsg, wantHint      *regexp.Regexp
	}{
		{"Parse error on line 2:\n...A[Call f(x)] --> B\n---^\nExpecting 'SQE', 'PIPE', got 'PS'", "A[Call f(x)] --> B", "flowchart",
			regexp.MustCompile(`found '\(' where Mermaid expected '\]', '\|'`), regexp.MustCompile(`double quotes`)},
		{"Parse error on line 3:\n...\nExpecting 'TXT', got 'NEWLINE'", "Alice->>Bob hi", "sequenceDiagram",
			regexp.MustCompile(`found the end of the line`), regexp.MustCompile(`colon`)},
		{"Parse error on line 2:\nExpecting 'SQE', got 'NEWLINE'", "A[Start", "flowchart",
			regexp.MustCompile(`end of the line`), regexp.MustCompile(`not closed`)},
		{"No diagram type detected matching given configuration for text: flowchat TD", "", "flowchat",
			regexp.MustCompile(`"flowchat" is not a Mermaid diagram type`), regexp.MustCompile("`flowchart TD`")},
		{"Trying to inactivate an inactive participant (Bob)", "", "sequenceDiagram",
			regexp.MustCompile(`inactive participant \(Bob\)`), regexp.MustCompile(`activate X`)},
		{"Lexer error on line 2, column 5: unexpected character: ->$<- at offset: 20", "", "pie",
			regexp.MustCompile(`"\$" is not accepted`), regexp.MustCompile(`double quotes`)},
		{"something else entirely", "", "classDiagram",
			regexp.MustCompile(`^something else entirely$`), regexp.MustCompile(`relation`)},
	} {
		msg, hint := explain(tc.message, tc.line, tc.keyword)
		if !tc.wantMsg.MatchString(msg) || !tc.wantHint.MatchString(hint) {
			t.Errorf("explain(%.40q)\n got  %q / %q\n want %v / %v", tc.message, msg, hint, tc.wantMsg, tc.wantHint)
		}
	}
}

// TestMermaidTypes: which diagram types become shapes and which the picture, as docs/mermaid.md says.
func TestMermaidTypes(t *testing.T) {
	r := shared(t)
	for _, tc := range []struct {
		src, typ string
		image    bool
	}{
		{"stateDiagram-v2\n  [*] --> Still\n  Still --> Moving\n  Moving --> [*]\n", "stateDiagram", false},
		{"erDiagram\n  CUSTOMER ||--o{ ORDER : places\n  ORDER ||--|{ LINE-ITEM : contains\n", "er", false},
		{"gantt\n  title Plan\n  dateFormat YYYY-MM-DD\n  section A\n  Task one :a1, 2024-01-01, 3d\n", "gantt", true},
		{"mindmap\n  root((Plan))\n    Goals\n    Risks\n", "mindmap", true},
		{"gitGraph\n  commit\n  branch dev\n  commit\n", "gitGraph", true},
	} {
		res, err := r.Mermaid(testCtx(t), tc.src)
		if err != nil {
			t.Errorf("%s: %v", tc.typ, err)
			continue
		}
		if res.Type != tc.typ || res.Image != tc.image {
			t.Errorf("%s: type %q image %v, want %q image %v", firstLine(tc.src), res.Type, res.Image, tc.typ, tc.image)
		}
	}
}

// TestMermaidHungTab: a Mermaid tab that spins gives a timeout, and the next call gets a new tab.
func TestMermaidHungTab(t *testing.T) {
	r := own(t, Config{Tabs: 1, RenderTimeout: 10 * time.Second})
	if _, err := r.mermaidEval(testCtx(t), `(() => { for (;;) {} })()`); !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	res, err := r.Mermaid(testCtx(t), "flowchart TD\n  A --> B\n")
	if err != nil || len(res.Elements) == 0 {
		t.Fatalf("after the hang: %d elements, %v", len(res.Elements), err)
	}
}

// TestMermaidConcurrent: calls from several goroutines take turns on the one tab and each gets its
// own diagram back.
func TestMermaidConcurrent(t *testing.T) {
	r := shared(t)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			id := fmt.Sprintf("node%d", i)
			res, err := r.Mermaid(testCtx(t), fmt.Sprintf("flowchart LR\n  %s[N%d] --> end%d[E%d]\n", id, i, i, i))
			if err != nil {
				t.Errorf("%s: %v", id, err)
				return
			}
			found := false // (elems would call t.Fatal, which must not run off the test goroutine)
			for _, raw := range res.Elements {
				var e struct{ ID string }
				found = found || json.Unmarshal(raw, &e) == nil && e.ID == id
			}
			if !found {
				t.Errorf("diagram %d came back without %s", i, id)
			}
		})
	}
	wg.Wait()
}

// mermaidTabNow returns the Mermaid tab if it is open, waiting for its turn.
func mermaidTabNow(r *Renderer) *tab {
	r.mermaid.init()
	r.mermaid.turn <- struct{}{}
	defer func() { <-r.mermaid.turn }()
	return r.mermaid.t
}

// TestWarmMermaid: with Config.WarmMermaid the Mermaid tab opens by itself after New, and the
// first conversion uses that tab instead of opening one.
func TestWarmMermaid(t *testing.T) {
	r := own(t, Config{Tabs: 1, WarmMermaid: true})
	var warm *tab
	waitfor.Until(t, 60*time.Second, "the Mermaid tab after New with WarmMermaid", func() bool {
		warm = mermaidTabNow(r)
		return warm != nil
	}, nil)
	if _, err := r.Mermaid(testCtx(t), "flowchart TD\n  A --> B\n"); err != nil {
		t.Fatal(err)
	}
	if got := mermaidTabNow(r); got != warm {
		t.Errorf("the first conversion used tab %p, want the warm tab %p", got, warm)
	}
}

// TestWarmMermaidClose: closing the renderer while its Mermaid tab is still opening returns and
// leaves no Chromium process or profile behind.
func TestWarmMermaidClose(t *testing.T) {
	needChrome(t)
	r, err := New(context.Background(), Config{ChromePath: os.Getenv("CHROME"), Tabs: 1, PracticeRenders: -1, WarmMermaid: true}, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	assertCloseLeavesNothing(t, r)
}
