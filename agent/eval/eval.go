// Package eval runs a suite of diagram requests against a real model and reports, per case,
// whether the run finished, its turns, tool errors, tokens, time, the lint warnings left in the
// final scene and the course corrections the runs needed. It needs a model, so CI runs only its
// unit tests; `excalibot eval` runs it.
package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/excalibot/excalibot/agent"
	"github.com/excalibot/excalibot/tools"
)

// Case is one diagram request, possibly followed by follow-up edits in the same thread.
type Case struct {
	Name string `json:"name"` // short, file-name safe: it names the pictures
	Kind string `json:"kind"` // org-chart, flowchart, architecture, sequence, follow-up …
	// Prompts are the thread's messages in order; the first draws, the rest edit.
	Prompts []string `json:"prompts"`
	// Labels must appear (case-insensitive) in the final scene's labels.
	Labels []string `json:"labels,omitempty"`
	// Absent must not appear in the final scene's labels (e.g. after a removal).
	Absent []string `json:"absent,omitempty"`
	// Route says, per prompt, tools of which the run must call at least one successfully: how the
	// system prompt should steer (graph tools for new diagrams and structure, element tools for
	// fine edits). An empty list or a missing entry expects nothing.
	Route [][]string `json:"route,omitempty"`
}

// Suite is a list of cases.
type Suite struct {
	Cases []Case `json:"cases"`
}

var nameOK = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,40}$`)

// toolNames are the tools a route may name: the agent's whole toolbox.
var toolNames = func() map[string]bool {
	m := map[string]bool{}
	for _, sp := range tools.New(nil, tools.Limits{}).Specs() {
		m[sp.Name] = true
	}
	return m
}()

// Load reads and checks a suite file.
func Load(path string) (Suite, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Suite{}, fmt.Errorf("read suite: %w", err)
	}
	return Parse(b)
}

// Parse decodes a suite and checks every case, naming the first problem of each.
func Parse(b []byte) (Suite, error) {
	var s Suite
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Suite{}, fmt.Errorf("parse suite: %w", err)
	}
	var errs []error
	seen := map[string]bool{}
	for i, c := range s.Cases {
		switch {
		case !nameOK.MatchString(c.Name):
			errs = append(errs, fmt.Errorf("case %d: name %q must be lower-case letters, digits and dashes", i, c.Name))
		case seen[c.Name]:
			errs = append(errs, fmt.Errorf("case %d: name %q is used twice", i, c.Name))
		case len(c.Prompts) == 0:
			errs = append(errs, fmt.Errorf("case %s: no prompts", c.Name))
		case c.Kind == "":
			errs = append(errs, fmt.Errorf("case %s: no kind", c.Name))
		}
		for j, p := range c.Prompts {
			if strings.TrimSpace(p) == "" {
				errs = append(errs, fmt.Errorf("case %s: prompt %d is empty", c.Name, j))
			}
		}
		if len(c.Route) > len(c.Prompts) {
			errs = append(errs, fmt.Errorf("case %s: %d routes for %d prompts", c.Name, len(c.Route), len(c.Prompts)))
		}
		for j, r := range c.Route {
			for _, name := range r {
				if !toolNames[name] {
					errs = append(errs, fmt.Errorf("case %s: route %d: no tool %q", c.Name, j, name))
				}
			}
		}
		seen[c.Name] = true
	}
	if len(s.Cases) == 0 {
		errs = append(errs, errors.New("the suite has no cases"))
	}
	if err := errors.Join(errs...); err != nil {
		return Suite{}, fmt.Errorf("check suite: %w", err)
	}
	return s, nil
}

// Select keeps the cases whose name or kind contains filter (all when filter is empty).
func (s Suite) Select(filter string) Suite {
	if filter == "" {
		return s
	}
	var out Suite
	for _, c := range s.Cases {
		if strings.Contains(c.Name, filter) || strings.Contains(c.Kind, filter) {
			out.Cases = append(out.Cases, c)
		}
	}
	return out
}

// Outcome is the measured result of one case, summed over its prompts.
type Outcome struct {
	Case string
	Kind string
	// Model and Protocol name what drew it, when a report compares several.
	Model        string
	Protocol     string
	Finished     bool // every run ended normally with no warnings, and the labels check passed
	Reason       agent.StopReason
	Runs         int
	Turns        int
	FirstTurns   int // model requests of the first prompt, which draws a new diagram
	ToolCalls    int
	ToolErrors   int
	PromptTokens int
	OutputTokens int
	Duration     time.Duration
	Warnings     []string // lint warnings of the final scene
	Missing      []string // expected labels not found, and absent labels found
	Err          string   // the error that ended the case, if any
	// Corrections sums the course corrections of the case's runs; Corrected counts, for each
	// kind, the runs that needed it at least once.
	Corrections agent.Corrections
	Corrected   agent.Corrections
	// State is the final scene as the agent remembers it (the labels the checks read).
	State []agent.ElementState
	// Scene is the final .excalidraw, set by the caller that owns the scene (WriteScene writes it).
	Scene []byte
}

// Thread runs one prompt of a case, continuing from the memory of the previous prompt. The first
// call of a case gets a zero Memory and must start from an empty canvas.
type Thread func(ctx context.Context, prompt string, mem agent.Memory) (agent.Result, error)

// RunCase plays the prompts of c in one thread and measures them.
func RunCase(ctx context.Context, c Case, th Thread) Outcome {
	o := Outcome{Case: c.Name, Kind: c.Kind}
	var mem agent.Memory
	var routes []string
	clean := true
	for _, p := range c.Prompts {
		res, err := th(ctx, p, mem)
		o.Runs++
		o.Turns += res.Turns
		if o.Runs == 1 {
			o.FirstTurns = res.Turns
		}
		o.ToolCalls += res.ToolCalls
		o.ToolErrors += res.ToolErrors
		o.PromptTokens += res.PromptTokens
		o.OutputTokens += res.OutputTokens
		o.Duration += res.Duration
		o.Reason = res.Reason
		o.Corrections = addCorrections(o.Corrections, res.Corrections)
		o.Corrected = addCorrections(o.Corrected, ranOnce(res.Corrections))
		if res.State != nil {
			o.State = res.State
		}
		o.Warnings = res.Warnings
		if err != nil {
			o.Err = err.Error()
			return o
		}
		clean = clean && res.Finished
		mem = res.Memory
		if i := o.Runs - 1; i < len(c.Route) && len(c.Route[i]) > 0 && !calledAny(res.Steps, c.Route[i]) {
			routes = append(routes, fmt.Sprintf("prompt %d called none of %s", i+1, strings.Join(c.Route[i], ", ")))
		}
	}
	o.Missing = append(CheckLabels(o.State, c.Labels, c.Absent), routes...)
	o.Finished = clean && len(o.Missing) == 0
	return o
}

func addCorrections(a, b agent.Corrections) agent.Corrections {
	return agent.Corrections{Nudges: a.Nudges + b.Nudges, Retries: a.Retries + b.Retries, PlanFallbacks: a.PlanFallbacks + b.PlanFallbacks,
		PlanFallbacksFailed: a.PlanFallbacksFailed + b.PlanFallbacksFailed, WithoutSchema: a.WithoutSchema + b.WithoutSchema}
}

// ranOnce is 1 for each correction that fired in a run, 0 for the others.
func ranOnce(c agent.Corrections) agent.Corrections {
	one := func(n int) int { return min(n, 1) }
	return agent.Corrections{Nudges: one(c.Nudges), Retries: one(c.Retries), PlanFallbacks: one(c.PlanFallbacks),
		PlanFallbacksFailed: one(c.PlanFallbacksFailed), WithoutSchema: one(c.WithoutSchema)}
}

// correctionNotes names the corrections of an outcome for its report line: "nudge 1, plan 1".
func correctionNotes(c agent.Corrections) string {
	var out []string
	for _, k := range []struct {
		name string
		n    int
	}{{"nudge", c.Nudges}, {"retry", c.Retries}, {"plan", c.PlanFallbacks}, {"plan failed", c.PlanFallbacksFailed}, {"no schema", c.WithoutSchema}} {
		if k.n > 0 {
			out = append(out, fmt.Sprintf("%s %d", k.name, k.n))
		}
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, ", ")
}

// calledAny reports whether steps hold a successful call of one of the tools.
func calledAny(steps []agent.Step, names []string) bool {
	for _, st := range steps {
		if st.Kind == agent.StepTool && !st.IsError && slices.Contains(names, st.Tool) {
			return true
		}
	}
	return false
}

// CheckLabels returns the expected labels missing from the scene ("missing X") and the absent
// ones present ("unexpected X"), matching case-insensitively within labels.
func CheckLabels(st []agent.ElementState, want, absent []string) []string {
	var labels []string
	for _, e := range st {
		labels = append(labels, strings.ToLower(e.Label))
	}
	has := func(s string) bool {
		s = strings.ToLower(s)
		for _, l := range labels {
			if strings.Contains(l, s) {
				return true
			}
		}
		return false
	}
	var out []string
	for _, w := range want {
		if !has(w) {
			out = append(out, "missing "+w)
		}
	}
	for _, a := range absent {
		if has(a) {
			out = append(out, "unexpected "+a)
		}
	}
	return out
}

// WriteScene writes the outcome's scene as DIR/NAME.excalidraw and returns the path.
func WriteScene(dir string, o Outcome) (string, error) {
	if len(o.Scene) == 0 {
		return "", nil
	}
	p := filepath.Join(dir, o.Case+".excalidraw")
	if err := os.WriteFile(p, o.Scene, 0o644); err != nil {
		return "", fmt.Errorf("write scene: %w", err)
	}
	return p, nil
}

// Report writes one line per outcome and the totals, then a line per model and protocol:
// cases passed, model requests per new diagram and per follow-up, tool calls per run.
func Report(w io.Writer, outs []Outcome) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "case\tkind\tmodel\tprotocol\tok\tend\truns\tturns\tcalls\terrors\ttokens in/out\ttime\twarnings\tcorrections\tnotes")
	var fin, turns, calls, errs, in, out, warn int
	var total time.Duration
	for _, o := range outs {
		ok := "no"
		if o.Finished {
			ok = "yes"
			fin++
		}
		notes := append(append([]string(nil), o.Missing...), o.Err)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d/%d\t%s\t%d\t%s\t%s\n", o.Case, o.Kind, dash(o.Model), dash(o.Protocol),
			ok, o.Reason, o.Runs, o.Turns, o.ToolCalls, o.ToolErrors, o.PromptTokens, o.OutputTokens,
			o.Duration.Round(100*time.Millisecond), len(o.Warnings), correctionNotes(o.Corrections), strings.Trim(strings.Join(notes, "; "), "; "))
		turns += o.Turns
		calls += o.ToolCalls
		errs += o.ToolErrors
		in += o.PromptTokens
		out += o.OutputTokens
		warn += len(o.Warnings)
		total += o.Duration
	}
	fmt.Fprintf(tw, "total\t\t\t\t%d/%d\t\t\t%d\t%d\t%d\t%d/%d\t%s\t%d\t\t\n", fin, len(outs), turns, calls, errs, in, out,
		total.Round(100*time.Millisecond), warn)
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	fmt.Fprintln(w)
	if err := Compare(w, outs); err != nil {
		return err
	}
	// The warnings themselves, so a person can see what went wrong without opening files.
	for _, o := range outs {
		ws := append([]string(nil), o.Warnings...)
		sort.Strings(ws)
		for _, wn := range ws {
			fmt.Fprintf(w, "%s: %s\n", o.Case, wn)
		}
	}
	return nil
}

// Compare writes one line per model and protocol, in the order they first appear: cases passed,
// model requests per new diagram (a case's first prompt) and per follow-up (the others), tool
// calls and tool errors per run, and how often each course correction fired: the times, and the
// share of runs that needed it (nudges; retries; plan fallbacks of the tool loop, and how many of
// them failed; the plan protocol's last request without the schema). A model that needs many
// corrections with one protocol may suit the other.
func Compare(w io.Writer, outs []Outcome) error {
	type key struct{ model, protocol string }
	type sums struct {
		cases, passed, runs, firstRuns, firstTurns, followRuns, followTurns, calls, errs int
		fixes, fixed                                                                     agent.Corrections
	}
	var order []key
	by := map[key]*sums{}
	for _, o := range outs {
		k := key{o.Model, o.Protocol}
		s := by[k]
		if s == nil {
			s = &sums{}
			by[k] = s
			order = append(order, k)
		}
		s.cases++
		if o.Finished {
			s.passed++
		}
		s.runs += o.Runs
		s.fixes = addCorrections(s.fixes, o.Corrections)
		s.fixed = addCorrections(s.fixed, o.Corrected)
		s.calls += o.ToolCalls
		s.errs += o.ToolErrors
		if o.Runs > 0 {
			s.firstRuns++
			s.firstTurns += o.FirstTurns
			s.followRuns += o.Runs - 1
			s.followTurns += o.Turns - o.FirstTurns
		}
	}
	per := func(n, d int) string {
		if d == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f", float64(n)/float64(d))
	}
	// times (share of runs)
	share := func(n, runs, d int) string {
		if n == 0 || d == 0 {
			return "0"
		}
		return fmt.Sprintf("%d (%.0f%%)", n, 100*float64(runs)/float64(d))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "model\tprotocol\tpassed\trequests/new diagram\trequests/follow-up\tcalls/run\terrors/run\tnudges\tretries\tplan fallbacks\tfailed\twithout schema")
	for _, k := range order {
		s := by[k]
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", dash(k.model), dash(k.protocol), s.passed, s.cases,
			per(s.firstTurns, s.firstRuns), per(s.followTurns, s.followRuns), per(s.calls, s.runs), per(s.errs, s.runs),
			share(s.fixes.Nudges, s.fixed.Nudges, s.runs), share(s.fixes.Retries, s.fixed.Retries, s.runs),
			share(s.fixes.PlanFallbacks, s.fixed.PlanFallbacks, s.runs), s.fixes.PlanFallbacksFailed,
			share(s.fixes.WithoutSchema, s.fixed.WithoutSchema, s.runs))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write comparison: %w", err)
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
