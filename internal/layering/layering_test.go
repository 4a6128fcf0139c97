package layering

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/excalibot/excalibot"

// layer is one package's row: the packages of ours it may import (imports), and what its tests may
// import besides (tests). Tests may always import their own package, anything their package may
// reach through imports, and the shared test support in testSupport.
type layer struct {
	imports []string
	tests   []string
}

// layers is the allowed-imports table, top of the stack first. Every package of the module has a
// row; a new package needs one, a new import of ours needs its row to allow it.
var layers = map[string]layer{
	"cmd/excalibot": {imports: []string{"agent", "agent/eval", "agent/ollama", "bot", "bot/agentdraw", "bot/relay", "bot/slack", "bot/telegram", "bot/webchat", "config", "diagram/mermaid", "internal/logkey", "internal/plural", "layout", "layout/dotproc", "links", "picture", "render", "scene", "store", "store/postgres", "store/sqlite", "tools", "web"}},
	"config":        {},

	"web":           {imports: []string{"diagram/outline", "internal/httpx", "internal/logkey", "ratelimit", "render", "render/export", "scene", "store"}, tests: []string{"agent", "agent/ollama", "bot", "bot/agentdraw", "bot/relay", "bot/webchat", "links"}},
	"links":         {imports: []string{"scene", "store"}},
	"bot/slack":     {imports: []string{"bot", "internal/clip", "internal/logkey"}, tests: []string{"bot/relay"}},
	"bot/telegram":  {imports: []string{"bot", "diagram/outline", "internal/logkey"}, tests: []string{"bot/relay"}},
	"bot/webchat":   {imports: []string{"bot", "internal/clip", "internal/httpx", "internal/logkey", "scene"}, tests: []string{"bot/relay", "links", "store"}},
	"bot/agentdraw": {imports: []string{"agent", "bot", "diagram/mermaid", "internal/logkey", "internal/plural", "scene", "tools"}},
	"bot/relay":     {imports: []string{"bot", "internal/clip", "internal/logkey", "store"}},
	"bot":           {imports: []string{"diagram/mermaid", "diagram/outline", "internal/clip", "internal/logkey", "internal/plural", "picture", "ratelimit", "render/export", "scene", "store"}},
	"ratelimit":     {},

	"agent":          {imports: []string{"agent/ollama", "agent/plan", "agent/textcall", "diagram/outline", "internal/clip", "internal/logkey", "internal/plural", "scene", "tools"}},
	"agent/eval":     {imports: []string{"agent", "tools"}},
	"agent/ollama":   {imports: []string{"internal/logkey", "tools"}},
	"agent/plan":     {imports: []string{"diagram", "internal/clip", "tools"}},
	"agent/textcall": {imports: []string{"internal/clip", "tools"}},
	"tools":          {imports: []string{"diagram", "diagram/graph", "diagram/mermaid", "diagram/sequence", "internal/clip", "internal/plural", "scene"}},
	"render":         {imports: []string{"diagram/mermaid", "diagram/outline", "internal/logkey", "render/export", "scene"}},
	"render/export":  {imports: []string{"scene"}},
	"picture":        {imports: []string{"scene"}},

	"diagram/graph":    {imports: []string{"diagram", "diagram/sequence", "layout", "scene", "scene/fontmetrics"}},
	"diagram/sequence": {imports: []string{"diagram", "scene", "scene/fontmetrics"}},
	"diagram/mermaid":  {imports: []string{"diagram", "internal/clip", "internal/plural", "scene", "scene/fontmetrics"}},
	"diagram/measure":  {imports: []string{"scene"}},
	"diagram":          {imports: []string{"scene"}},
	"diagram/outline":  {imports: []string{"internal/clip", "internal/plural", "scene"}, tests: []string{"diagram/graph", "diagram/sequence"}},
	"layout":           {imports: []string{"layout/dotproc"}, tests: []string{"layout/elk"}},
	"layout/dotproc":   {},
	"layout/elk":       {imports: []string{"layout"}, tests: []string{"diagram/graph", "scene"}},

	"store":                  {},
	"store/internal/sqlcore": {imports: []string{"store"}},
	"store/sqlite":           {imports: []string{"store", "store/internal/sqlcore"}},
	"store/postgres":         {imports: []string{"store", "store/internal/sqlcore"}},

	"scene":                              {imports: []string{"scene/fontmetrics"}},
	"scene/fontmetrics":                  {tests: []string{"scene/fontmetrics/internal/browser"}},
	"scene/fontmetrics/internal/browser": {},
	"scene/fontmetrics/internal/gen":     {imports: []string{"scene/fontmetrics/internal/browser"}},

	"internal/httpx":  {},
	"internal/logkey": {},
	"internal/clip":   {},
	"internal/plural": {},
	// The corpus of real diagrams, converted the way the program converts them and measured.
	"internal/corpus": {tests: []string{"diagram/graph", "diagram/measure", "diagram/mermaid", "layout", "layout/dotproc", "layout/elk", "render", "scene", "tools"}},

	// Test support: fakes of outside services and helpers, imported by tests only.
	"agent/ollamafake":    {tests: []string{"agent/ollama"}},
	"bot/slack/slackfake": {},
	"bot/telegram/tgfake": {},
	"bot/bottest":         {imports: []string{"bot", "render/export", "scene"}},
	"store/storetest":     {imports: []string{"internal/waitfor", "store"}},
	"internal/fuzzbound":  {},
	"internal/corpusdir":  {},
	"internal/waitfor":    {},
	"internal/pgtest":     {},
	"internal/layering":   {},
}

// testSupport may be imported by any package's tests (still subject to the named rules below).
var testSupport = []string{"internal/fuzzbound", "internal/corpusdir", "internal/waitfor", "internal/pgtest", "store/sqlite", "store/storetest",
	"agent/ollamafake", "bot/slack/slackfake", "bot/telegram/tgfake", "bot/bottest"}

// adapters are the chat platforms' adapters and the chat page's; none imports another, nor
// another's fake.
var adapters = []string{"bot/slack", "bot/telegram", "bot/webchat"}

// layoutEngine is the Graphviz module, whose WASM compiles when a binary starts; only the packages
// that lay out graphs, and the ones above them that draw with them, may reach it.
const layoutEngine = "github.com/goccy/go-graphviz"

var layingOut = []string{"layout", "layout/dotproc", "layout/elk", "diagram/graph", "tools", "agent", "agent/eval", "agent/ollama", "agent/plan", "agent/textcall",
	"bot/agentdraw", "cmd/excalibot"}

// jsEngine is the JavaScript engine that runs ELK's 1.6 MB script (layout/elk): a package of the
// program that reached it would carry both into the binary, so only layout/elk may, and tests.
const jsEngine = "github.com/dop251/goja"

// chatPlatforms are the import paths that mean a chat platform, which the agent must not know.
var chatPlatforms = []string{module + "/bot", module + "/web", "github.com/slack-go/", "github.com/go-telegram/"}

type pkg struct {
	ImportPath   string
	Deps         []string // every package the production code reaches
	Imports      []string
	TestImports  []string
	XTestImports []string
	Error        *struct{ Err string }
	rel          string
}

// ours returns p's path relative to the module, or "" when p is not ours.
func ours(p string) string {
	if p == module {
		return "."
	}
	if r, ok := strings.CutPrefix(p, module+"/"); ok {
		return r
	}
	return ""
}

// under reports whether rel is root or inside it.
func under(rel, root string) bool { return rel == root || strings.HasPrefix(rel, root+"/") }

func listPackages(t *testing.T) []pkg {
	t.Helper()
	statSources(t, "../..")
	cmd := exec.Command("go", "list", "-e", "-json", "./...") // -e: an import cycle still lists, and is named below
	cmd.Dir = "../.."
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -e -json ./...: %v\n%s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		p.rel = ours(p.ImportPath)
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < len(layers)/2 {
		t.Fatalf("go list found %d packages, want about %d", len(pkgs), len(layers))
	}
	return pkgs
}

// statSources stats every Go file and go.mod under root. The go command caches a test's result
// until a file the test consulted changes; go list's reads are not seen, these are, so an edited
// import runs the test again.
func statSources(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".go") || d.Name() == "go.mod") {
			_, err = os.Stat(path)
		}
		return err
	})
	if err != nil {
		t.Fatalf("walk the module's sources: %v", err)
	}
}

// reach is the set of our packages rel may reach through production imports, by the table.
func reach(rel string) map[string]bool {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		for _, q := range layers[p].imports {
			if !seen[q] {
				seen[q] = true
				walk(q)
			}
		}
	}
	walk(rel)
	return seen
}

// TestImports checks every import of ours in the module against the layering table and the
// named rules, and names each offending import and each allowance no package uses.
func TestImports(t *testing.T) {
	pkgs := listPackages(t)
	for _, p := range pkgs {
		if p.Error != nil {
			t.Errorf("%s: %s", p.ImportPath, p.Error.Err)
		}
		for _, err := range check(p) {
			t.Error(err)
		}
		for _, err := range unused(p) {
			t.Error(err)
		}
	}
	listed := map[string]bool{}
	for _, p := range pkgs {
		listed[p.rel] = true
	}
	for rel := range layers {
		if !listed[rel] {
			t.Errorf("the layering table has a row for %s, which is no package of the module; drop the row", rel)
		}
	}
}

// check returns one error per import of p that breaks a rule.
func check(p pkg) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	row, ok := layers[p.rel]
	if !ok {
		bad("%s has no row in the layering table (internal/layering); add one with the imports it may make", p.rel)
		return errs
	}
	type use struct{ path, how string }
	var uses []use
	for _, q := range p.Imports {
		uses = append(uses, use{q, "imports"})
	}
	for _, q := range slices.Concat(p.TestImports, p.XTestImports) {
		uses = append(uses, use{q, "tests import"})
	}
	for _, q := range p.Deps {
		if !slices.Contains(p.Imports, q) { // a direct import is named once, as such
			uses = append(uses, use{q, "reaches"})
		}
	}
	reachable := reach(p.rel)
	for _, u := range uses {
		if u.path == layoutEngine && u.how != "tests import" && !slices.Contains(layingOut, p.rel) {
			bad("%s %s %s: only the packages that lay out graphs link the layout engine (it compiles its WASM at start)", p.rel, u.how, u.path)
			continue
		}
		if under(u.path, jsEngine) && u.how != "tests import" && p.rel != "layout/elk" {
			bad("%s %s %s: only layout/elk links the JavaScript engine (and ELK's script with it)", p.rel, u.how, u.path)
			continue
		}
		q := ours(u.path)
		if q != "" {
			if under(p.rel, "scene") && !under(q, "scene") && u.how != "tests import" {
				bad("%s %s %s: scene imports nothing of ours", p.rel, u.how, q)
				continue
			}
			if q == "config" && p.rel != "cmd/excalibot" {
				bad("%s %s config: only cmd/excalibot reads configuration", p.rel, u.how)
				continue
			}
			if a, b := adapterOf(p.rel), adapterOf(q); a != "" && b != "" && a != b {
				bad("%s %s %s: adapters never import each other", p.rel, u.how, q)
				continue
			}
		}
		if under(p.rel, "agent") {
			if i := slices.IndexFunc(chatPlatforms, func(c string) bool { return under(u.path, strings.TrimSuffix(c, "/")) }); i >= 0 {
				name := u.path
				if q != "" {
					name = q
				}
				bad("%s %s %s: the agent knows no chat platform", p.rel, u.how, name)
				continue
			}
		}
		if q == "" || q == p.rel || u.how == "reaches" {
			continue
		}
		switch {
		case u.how == "imports" && !slices.Contains(row.imports, q):
			bad("%s imports %s, which its row in the layering table does not allow: imports point down the stack (DEVELOPERS.md)", p.rel, q)
		case u.how == "tests import" && !reachable[q] && !slices.Contains(row.imports, q) &&
			!slices.Contains(row.tests, q) && !slices.Contains(testSupport, q):
			bad("%s's tests import %s, which is neither below %s in the layering table nor test support", p.rel, q, p.rel)
		}
	}
	return errs
}

// unused returns one error per allowance in p's row that p does not use: a row says what a
// package imports, so an allowance nobody takes is a door left open for the wrong import.
func unused(p pkg) []error {
	row, ok := layers[p.rel]
	if !ok {
		return nil // check reports the missing row
	}
	direct := map[string]bool{}
	for _, q := range p.Imports {
		direct[ours(q)] = true
	}
	tested := map[string]bool{}
	for _, q := range slices.Concat(p.TestImports, p.XTestImports) {
		tested[ours(q)] = true
	}
	var errs []error
	for _, q := range row.imports {
		if !direct[q] {
			errs = append(errs, fmt.Errorf("%s's row in the layering table allows importing %s, which it does not import; drop it from the row", p.rel, q))
		}
	}
	for _, q := range row.tests {
		if !tested[q] {
			errs = append(errs, fmt.Errorf("%s's row in the layering table lets its tests import %s, which they do not; drop it from the row", p.rel, q))
		}
	}
	return errs
}

// adapterOf returns the adapter whose tree rel is in (an adapter's fake is part of it), or "".
func adapterOf(rel string) string {
	// bot/slack's tree includes bot/slack/slackfake.
	for _, a := range adapters {
		if under(rel, a) {
			return a
		}
	}
	return ""
}
