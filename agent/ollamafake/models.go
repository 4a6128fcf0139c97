package ollamafake

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/types/model"
)

// Ready model names, each described in Known as Ollama reports the real model.
const (
	// ToolModel calls tools and thinks: completion, tools, thinking; 40960 tokens of context.
	ToolModel = "qwen3:8b"
	// ToolLessModel cannot call tools: completion, vision; 131072 tokens of context.
	ToolLessModel = "gemma3:4b"
	// VisionToolModel sees pictures and calls tools: completion, vision, tools.
	VisionToolModel = "mistral-small3.2:24b"
)

// ModelSpec is what /api/show reports of a pulled model. Zero fields take the defaults noted.
type ModelSpec struct {
	// Capabilities as Ollama names them (completion, tools, thinking, vision, insert, embedding).
	// nil means ["completion","tools"]; an empty, non-nil slice means none reported, as an Ollama
	// older than 0.6.4 answers. The chat route checks tools and thinking against them.
	Capabilities []string
	// ContextLength is "<architecture>.context_length" in model_info (default 40960).
	ContextLength int
	// Family is details.family and general.architecture (default: the model's name up to its
	// first '.', '-' or '_', e.g. "qwen3" for qwen3:8b).
	Family        string
	ParameterSize string // default "8.2B"
	Quantization  string // default "Q4_K_M"
}

// Known are the ready models' specs, used for a pulled model Config.Info does not describe.
var Known = map[string]ModelSpec{
	ToolModel: {Capabilities: []string{"completion", "tools", "thinking"}, ContextLength: 40960,
		Family: "qwen3", ParameterSize: "8.2B", Quantization: "Q4_K_M"},
	ToolLessModel: {Capabilities: []string{"completion", "vision"}, ContextLength: 131072,
		Family: "gemma3", ParameterSize: "4.3B", Quantization: "Q4_K_M"},
	VisionToolModel: {Capabilities: []string{"completion", "vision", "tools"}, ContextLength: 131072,
		Family: "mistral3", ParameterSize: "24.0B", Quantization: "Q4_K_M"},
}

// pulledModel is one model of /api/tags.
type pulledModel struct {
	name     string
	digest   string
	modified time.Time
}

// pulledAt is when the models a fake starts with were pulled; Pull is a minute later each time.
var pulledAt = time.Date(2025, 5, 3, 10, 0, 0, 0, time.UTC)

// digestOf stands in for a manifest's sha256: another model, or the same name pulled again,
// has another digest.
func digestOf(name string, pull int) string {
	return fmt.Sprintf("%x", sha256.Sum256(fmt.Appendf(nil, "%s\x00%d", name, pull)))
}

// Pull adds a model as `ollama pull` would, described by spec, or pulls a model again as a new
// version (a new digest, spec as given): it comes first in /api/tags, the most recent.
func (s *Server) Pull(name string, spec ModelSpec) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pulls++
	s.models = slices.DeleteFunc(s.models, func(m pulledModel) bool { return m.name == name })
	s.models = slices.Insert(s.models, 0, pulledModel{name: name, digest: digestOf(name, s.pulls),
		modified: pulledAt.Add(time.Duration(s.pulls) * time.Minute)})
	if s.info == nil {
		s.info = map[string]ModelSpec{}
	}
	s.info[name] = spec
}

// Remove takes a model away as `ollama rm` would: /api/show and chat answer 404 for it.
func (s *Server) Remove(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = slices.DeleteFunc(s.models, func(m pulledModel) bool { return m.name == name })
}

// Shown returns the model names /api/show was asked about, oldest first.
func (s *Server) Shown() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.shown)
}

// tags answers GET /api/tags as Ollama's ListHandler does: the most recently pulled first.
func (s *Server) tags(w http.ResponseWriter) {
	s.mu.Lock()
	pulled := slices.Clone(s.models)
	s.mu.Unlock()
	models := []api.ListModelResponse{}
	for _, m := range pulled {
		sp := s.spec(m.name)
		models = append(models, api.ListModelResponse{Name: m.name, Model: m.name, ModifiedAt: m.modified,
			Size: 5225388164, Digest: m.digest,
			Details: api.ModelDetails{Format: "gguf", Family: sp.Family, Families: []string{sp.Family},
				ParameterSize: sp.ParameterSize, QuantizationLevel: sp.Quantization}})
	}
	writeJSON(w, http.StatusOK, api.ListResponse{Models: models})
}

// spec returns the spec of a pulled model with its defaults filled in.
func (s *Server) spec(name string) ModelSpec {
	s.mu.Lock()
	sp, ok := s.info[name]
	s.mu.Unlock()
	if !ok {
		sp = Known[name]
	}
	if sp.Capabilities == nil {
		sp.Capabilities = []string{"completion", "tools"}
	}
	if sp.ContextLength == 0 {
		sp.ContextLength = 40960
	}
	if sp.Family == "" {
		sp.Family = familyOf(name)
	}
	if sp.ParameterSize == "" {
		sp.ParameterSize = "8.2B"
	}
	if sp.Quantization == "" {
		sp.Quantization = "Q4_K_M"
	}
	return sp
}

// familyOf guesses the architecture from a model name: "llama3.1:8b" → "llama".
func familyOf(name string) string {
	base := model.ParseName(name).Model
	if base == "" {
		base = name
	}
	if i := strings.IndexAny(base, ".-_"); i > 0 {
		base = base[:i]
	}
	return strings.ToLower(base)
}

// show answers POST /api/show as Ollama's ShowHandler does.
func (s *Server) show(w http.ResponseWriter, r *http.Request) {
	var req api.ShowRequest
	if !decode(w, r, &req) {
		return
	}
	name := req.Model
	if name == "" {
		name = req.Name
	}
	if name == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "model is required"})
		return
	}
	s.mu.Lock()
	s.shown = append(s.shown, name)
	s.mu.Unlock()
	pulled, ok := s.pulled(name)
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("model '%s' not found", name)})
		return
	}
	sp := s.spec(pulled)
	caps := make([]model.Capability, 0, len(sp.Capabilities))
	for _, c := range sp.Capabilities {
		caps = append(caps, model.Capability(c))
	}
	arch := sp.Family
	resp := api.ShowResponse{
		Modelfile: fmt.Sprintf("# Modelfile generated by \"ollama show\"\n# To build a new Modelfile based on this, replace FROM with:\n# FROM %s\n\nFROM /root/.ollama/models/blobs/sha256-%x\nTEMPLATE \"\"\"%s\"\"\"\nPARAMETER temperature 0.6\n",
			pulled, len(pulled), template(sp)),
		Parameters: fmt.Sprintf("%-30s %#v\n%-30s %#v", "temperature", 0.6, "top_k", 20),
		Template:   template(sp),
		Details: api.ModelDetails{Format: "gguf", Family: sp.Family, Families: []string{sp.Family},
			ParameterSize: sp.ParameterSize, QuantizationLevel: sp.Quantization},
		ModelInfo: map[string]any{
			"general.architecture":         arch,
			"general.file_type":            15,
			"general.parameter_count":      8190735360,
			"general.quantization_version": 2,
			arch + ".block_count":          36,
			arch + ".context_length":       sp.ContextLength,
			arch + ".embedding_length":     4096,
			"tokenizer.ggml.model":         "gpt2",
		},
		Capabilities: caps,
		ModifiedAt:   time.Date(2025, 5, 3, 10, 0, 0, 0, time.UTC),
	}
	writeJSON(w, http.StatusOK, resp)
}

// template is a chat template of the kind the model has: one that renders tools only for a
// model with the tools capability.
func template(sp ModelSpec) string {
	if slices.Contains(sp.Capabilities, "tools") {
		return "{{- if .Tools }}<tools>{{ range .Tools }}{{ . }}{{ end }}</tools>{{ end }}{{ range .Messages }}<|{{ .Role }}|>{{ .Content }}{{ end }}"
	}
	return "{{ range .Messages }}<|{{ .Role }}|>{{ .Content }}{{ end }}"
}

// refuse says why Ollama would refuse a chat request to a pulled model before running it, or ""
// when it would run it. The texts are Ollama's: ChatHandler checks thinking by the request's
// name, then the scheduler checks capabilities by the full name.
func (s *Server) refuse(req api.ChatRequest, pulled string) (int, string) {
	sp := s.spec(pulled)
	if len(sp.Capabilities) == 0 { // an old server checks nothing
		return 0, ""
	}
	if req.Think != nil && req.Think.Bool() && !slices.Contains(sp.Capabilities, "thinking") {
		return http.StatusBadRequest, fmt.Sprintf("%q does not support thinking", req.Model)
	}
	if !slices.Contains(sp.Capabilities, "completion") {
		return http.StatusBadRequest, fmt.Sprintf("%q does not support chat", req.Model)
	}
	if len(req.Tools) > 0 && !slices.Contains(sp.Capabilities, "tools") {
		return http.StatusBadRequest, model.ParseName(pulled).String() + " does not support tools"
	}
	return 0, ""
}

// checkFormat says what Ollama's runner answers a format it cannot use, or "".
func checkFormat(format []byte) string {
	switch string(format) {
	case "", "null", `""`, `"json"`:
		return ""
	}
	if format[0] != '{' {
		return fmt.Sprintf("invalid format: %q; expected \"json\" or a valid JSON Schema object", format)
	}
	return ""
}
