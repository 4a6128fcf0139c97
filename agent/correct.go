package agent

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// Course corrections: a small model that answers with nothing, with a call the loop cannot read,
// or with words instead of the drawing it was asked for, usually gets it right when told so once.
// Each correction is sent at most once per run; after that the run ends and says what happened,
// except that a turn that cannot be read is then asked again as a typed plan (fallback.go).
const (
	emptyReplyText = "Your reply was empty. Call the tools that draw what the user asked for (create_graph for a new diagram), then call done."
	garbledText    = "Your reply looks like a tool call written as text, but it could not be read. Call the tool through the tool-call field, with its arguments as one JSON object that matches its schema."
	nothingText    = "Nothing in the diagram has changed yet, but the user asked for a drawing. Call the tools that make it now (create_graph for a new diagram, the graph or element tools for a change), then call done."
)

// correction returns the message to send when the model ended its turn (no calls, or done)
// without the drawing it was asked for, or "" when the run may end. Turns that could not be read
// at all are corrected in fallback.go.
func (r *run) correction() string {
	if r.drawingMissing() {
		return r.once("nothing", nothingText)
	}
	return ""
}

func (r *run) once(key, text string) string {
	if r.corrected[key] {
		return ""
	}
	r.corrected[key] = true
	return text
}

// ended is the reason a run that the model ended stops with: StopNoChange when it was asked to draw
// and changed nothing.
func (r *run) ended(reason StopReason) StopReason {
	if r.drawingMissing() {
		return StopNoChange
	}
	return reason
}

// drawingMissing: the user asked for a drawing, no tool call changed the scene, and the model's
// last words are not a question back to the user.
func (r *run) drawingMissing() bool {
	return r.req.Scene != nil && !r.res.Changed && asksForDrawing(r.req.Prompt) && !strings.HasSuffix(r.final, "?")
}

var (
	drawWords = regexp.MustCompile(`(?i)\b(draw|redraw|sketch|plot|add|make|create|build|put|insert|connect|link|rename|relabel|remove|delete|drop|change|colou?r|paint|move|replace|update|swap|split|merge|group|undo|visuali[sz]e|illustrate|diagram (?:of|for)|show (?:me|us))\b`)
	smallTalk = regexp.MustCompile(`(?i)^\W*(thanks|thank you|thx|ty|ok|okay|cool|great|nice|perfect|awesome|lgtm|good|hi|hello|hey)\b[\W\s]*$`)
)

// asksForDrawing tells a request to draw or change something from a question or small talk, which
// the model may answer in words: a statement asks for a drawing, a question only when it asks for
// a change ("can you add a cache?").
func asksForDrawing(prompt string) bool {
	p := strings.TrimSpace(prompt)
	if p == "" || smallTalk.MatchString(p) {
		return false
	}
	return !strings.HasSuffix(p, "?") || drawWords.MatchString(p)
}

// canonicalJSON is args with sorted keys and no spaces, for telling duplicate calls apart.
func canonicalJSON(args json.RawMessage) string {
	var v any
	if json.Unmarshal(args, &v) != nil {
		return string(args)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return string(args)
	}
	return string(b)
}

// unwrapArgs undoes one level of extra nesting that some models add around a call's arguments:
// {"arguments": {…}}, or the whole call again ({"function": "x", "arguments": {…}}, {"args": {…},
// "func": "x"}), unless the tool really has a parameter of that name.
func unwrapArgs(args json.RawMessage, schema json.RawMessage) json.RawMessage {
	if len(args) == 0 || !bytes.Contains(args, []byte(`"arguments"`)) && !bytes.Contains(args, []byte(`"parameters"`)) &&
		!bytes.Contains(args, []byte(`"args"`)) {
		return args
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil || len(obj) > 2 {
		return args
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	var inner json.RawMessage
	for k, v := range obj {
		if _, real := s.Properties[k]; real {
			return args
		}
		switch k {
		case "arguments", "parameters", "args":
			inner = v
		case "function", "name", "tool", "func":
			// the call's name repeated beside its arguments
		default:
			return args
		}
	}
	if t := bytes.TrimSpace(inner); len(t) > 0 && t[0] == '{' {
		return t
	}
	return args
}
