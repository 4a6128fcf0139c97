package textcall

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/internal/fuzzbound"
)

// FuzzParse feeds model text to the call reader: it must never panic or hang, every
// call it returns has a name and either a JSON object of arguments or an error, and what it
// leaves for people is never longer than the text. The seeds are the real outputs.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "realoutputs", "*.json"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		var o struct {
			Content string `json:"content"`
		}
		if json.Unmarshal(b, &o) == nil {
			f.Add(o.Content)
		}
	}
	f.Add(strings.Repeat("{", 2000))
	f.Add(strings.Repeat(`{"a":[`, 100))
	known := Types{"create_graph": {"nodes": "array"}, "done": {"summary": "string"}}
	f.Fuzz(func(t *testing.T, s string) {
		var calls []Call
		var rest string
		_ = fuzzbound.Within(5*time.Second, "parse text calls", func() error {
			calls, rest = Parse(s, known)
			return nil
		})
		for _, c := range calls {
			if c.ArgsErr == "" && !json.Valid(c.Args) {
				t.Errorf("call %q has invalid arguments %q", c.Name, c.Args)
			}
		}
		if len(rest) > len(s) {
			t.Errorf("visible text %d bytes from %d", len(rest), len(s))
		}
	})
}
