package web

import (
	"context"
	"html/template"
	"net/http"
	"time"

	"github.com/excalibot/excalibot/internal/logkey"
)

// checkResult is one readiness check's outcome.
type checkResult struct {
	Name string
	Err  error
}

// runChecks runs every readiness check within five seconds, in order.
func (s *Server) runChecks(ctx context.Context) []checkResult {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out := make([]checkResult, len(s.opt.Checks))
	for i, c := range s.opt.Checks {
		out[i] = checkResult{Name: c.Name, Err: c.Fn(ctx)}
	}
	return out
}

// ModelHealth is what the home page shows of the model that draws. The program fills it in
// (package web knows nothing of Ollama); its words are for anyone who opens the page, so they
// name models and settings but no host and no error.
type ModelHealth struct {
	// Problem says why nothing can be drawn now (Ollama does not answer, the model is not
	// pulled) and Fix what to do; both empty when drawing works.
	Problem, Fix string
	Reachable    bool     // Ollama answers
	Version      string   // Ollama's version, e.g. "0.17.4"
	Model        string   // the model that draws
	Pulled       bool     // Ollama has the model
	Capabilities []string // as Ollama names them; empty when not reported
	Protocol     string   // how the model draws: "tools" or "plan"
	// Vision is the model that reads pictures sent with a request (Model itself when VisionOwn),
	// VisionReady whether it can; when it cannot, VisionProblem says why and VisionFix what to do.
	Vision                   string
	VisionOwn, VisionReady   bool
	VisionProblem, VisionFix string
}

// homeData is what the page at / shows.
type homeData struct {
	Chat   bool // the chat page is mounted on this server
	Ready  bool // every readiness check passed
	Checks []homeCheck
	Model  *ModelHealth // nil when the server was not told about the model
	Draws  bool         // Ready, and the model can draw
}

type homeCheck struct {
	Name  string
	Ready bool
}

// home serves /: what this server is, a link to the chat page, and whether each part is ready.
// It names the parts but not their errors, which /readyz gives to whoever operates the server.
func (s *Server) home(w http.ResponseWriter, r *http.Request) {
	d := homeData{Ready: true, Chat: s.mounted("/chat")}
	for _, c := range s.runChecks(r.Context()) {
		d.Checks = append(d.Checks, homeCheck{Name: c.Name, Ready: c.Err == nil})
		d.Ready = d.Ready && c.Err == nil
	}
	d.Draws = d.Ready
	if s.opt.Model != nil {
		m := s.opt.Model(r.Context())
		d.Model = &m
		d.Draws = d.Ready && m.Problem == ""
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := homePage.Execute(w, d); err != nil {
		s.log.Warn("write the home page", logkey.Err, err)
	}
}

// mounted reports whether a GET of path reaches a route of this server (the chat page is mounted
// by the program, not by package web).
func (s *Server) mounted(path string) bool {
	r, err := http.NewRequest(http.MethodGet, path, nil)
	if err != nil {
		return false
	}
	_, pattern := s.mux.Handler(r)
	return pattern != ""
}

// homePage has no script: the CSP allows only the server's own files, and the page needs none.
var homePage = template.Must(template.New("home").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>excalibot</title>
<link rel="icon" href="data:,">
<style>
body { margin: 0 auto; max-width: 640px; padding: 24px; font: 15px/1.5 system-ui, sans-serif; color: #1e1e1e; background: #f8f9fa; }
h1 { font-size: 24px; margin: 0 0 8px; }
section { background: #fff; border: 1px solid #e9ecef; border-radius: 10px; padding: 12px 16px; margin: 16px 0; }
h2 { font-size: 16px; margin: 0 0 8px; }
ul { margin: 0; padding-left: 20px; }
.ok { color: #2b8a3e; } .bad { color: #c92a2a; }
code { font-size: 14px; }
</style>
</head>
<body>
<h1>excalibot</h1>
<p>excalibot draws diagrams in chat threads (Slack, Telegram{{if .Chat}} and its own chat page{{end}}):
someone asks for a diagram, a language model draws it on an Excalidraw canvas, and the bot posts
the picture with a link to edit it. Follow-ups in the same thread change the same diagram; an
<code>.excalidraw</code> file is imported, and a photo or screenshot of a diagram is redrawn.</p>
<p>This is its web server. It serves the editor behind the links in the bot's replies
(<code>/d/…</code>), their downloads{{if .Chat}}, and the bot's own <a href="/chat">chat page</a>,
where you can ask for diagrams in the browser and drop files on the conversation (open on this
machine; from elsewhere with the server's shared secret){{end}}.</p>
<section id="health" aria-label="Health">
<h2>Health: {{if .Draws}}<span class="ok">ready</span>{{else if .Ready}}<span class="bad">drawing is not ready</span>{{else}}<span class="bad">not ready</span>{{end}}</h2>
<ul>
<li>web server: <span class="ok">ready</span></li>
{{- range .Checks}}
<li>{{.Name}}: {{if .Ready}}<span class="ok">ready</span>{{else}}<span class="bad">not ready</span>{{end}}</li>
{{- end}}
{{- with .Model}}
{{- if .Reachable}}
<li>Ollama: <span class="ok">ready</span>{{with .Version}} (version {{.}}){{end}}</li>
{{- if .Pulled}}
<li>model {{.Model}}: <span class="ok">pulled</span>; {{if .Capabilities}}can do {{range $i, $c := .Capabilities}}{{if $i}}, {{end}}{{$c}}{{end}}{{else}}capabilities not reported{{end}}; draws with {{if eq .Protocol "plan"}}typed plans (protocol <code>plan</code>){{else}}tool calls (protocol <code>tools</code>){{end}}</li>
{{- else}}
<li>model {{.Model}}: <span class="bad">not pulled</span></li>
{{- end}}
{{- else}}
<li>Ollama: <span class="bad">not reachable</span></li>
{{- end}}
{{- if .Problem}}
<li class="fix"><span class="bad">{{.Problem}}</span>: {{.Fix}}</li>
{{- end}}
{{- if .Vision}}
<li>pictures: {{if .VisionReady}}<span class="ok">{{.Vision}} reads them</span>{{if .VisionOwn}} (the model itself){{end}}{{else}}<span class="bad">{{.VisionProblem}}</span>{{if .VisionFix}}: {{.VisionFix}}{{end}}{{end}}</li>
{{- end}}
{{- end}}
</ul>
<p>Details: <a href="/readyz">/readyz</a> (why a part is not ready), <a href="/healthz">/healthz</a>,
<a href="/metrics">/metrics</a>.</p>
</section>
</body>
</html>
`))
