package web

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the Prometheus metrics of the process, served at /metrics. It has the methods of the
// conversation's and the work engine's observers, so runs, tool calls, model and render latencies
// are counted where they happen.
type Metrics struct {
	reg           *prometheus.Registry
	runs          *prometheus.CounterVec
	runSeconds    prometheus.Histogram
	toolCalls     *prometheus.CounterVec
	modelSeconds  prometheus.Histogram
	renders       *prometheus.CounterVec
	renderSeconds prometheus.Histogram
	errors        *prometheus.CounterVec
	editorOpens   prometheus.Counter
	editorSaves   *prometheus.CounterVec
}

// NewMetrics registers every metric on a registry of its own (plus Go and process collectors).
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	m := &Metrics{
		reg: reg,
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "excalibot_runs_total",
			Help: "Drawing runs by outcome (done, failed, interrupted, conflict)."}, []string{"outcome"}),
		runSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "excalibot_run_seconds",
			Help: "Wall time of a drawing run, message to reply.", Buckets: prometheus.ExponentialBuckets(0.25, 2, 12)}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "excalibot_tool_calls_total",
			Help: "Tool calls by tool and outcome (ok, error)."}, []string{"tool", "outcome"}),
		modelSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "excalibot_model_seconds",
			Help: "Time of one model request.", Buckets: prometheus.ExponentialBuckets(0.05, 2, 12)}),
		renders: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "excalibot_renders_total",
			Help: "Renders by format and outcome."}, []string{"format", "outcome"}),
		renderSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "excalibot_render_seconds",
			Help: "Time of one render.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 12)}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "excalibot_errors_total",
			Help: "Errors by kind (model, render, store, chat, import)."}, []string{"kind"}),
		editorOpens: prometheus.NewCounter(prometheus.CounterOpts{Name: "excalibot_editor_opens_total",
			Help: "Editor pages served."}),
		editorSaves: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "excalibot_editor_saves_total",
			Help: "Saves from the editor by outcome (ok, conflict, too_large, error)."}, []string{"outcome"}),
	}
	for _, c := range []prometheus.Collector{m.runs, m.runSeconds, m.toolCalls, m.modelSeconds, m.renders,
		m.renderSeconds, m.errors, m.editorOpens, m.editorSaves,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		f(c)
	}
	return m
}

// Queue is the work of this process, whose depth /metrics reports.
type Queue interface {
	QueueDepth() (waiting, active int)
}

// watch exposes q's depth as gauges read at scrape time.
func (m *Metrics) watch(q Queue) {
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "excalibot_queue_waiting", Help: "Messages waiting behind a running job of their thread."},
			func() float64 { w, _ := q.QueueDepth(); return float64(w) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "excalibot_queue_active", Help: "Threads with a job running or waiting."},
			func() float64 { _, a := q.QueueDepth(); return float64(a) }),
	)
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// RunFinished counts a drawing run.
func (m *Metrics) RunFinished(outcome string, d time.Duration) {
	m.runs.WithLabelValues(outcome).Inc()
	m.runSeconds.Observe(d.Seconds())
}

// ToolCalled counts a tool call.
func (m *Metrics) ToolCalled(tool string, failed bool) {
	o := "ok"
	if failed {
		o = "error"
	}
	m.toolCalls.WithLabelValues(tool, o).Inc()
}

// ModelAnswered records the time of one model request.
func (m *Metrics) ModelAnswered(d time.Duration) { m.modelSeconds.Observe(d.Seconds()) }

// Rendered records one render.
func (m *Metrics) Rendered(format string, d time.Duration, err error) {
	m.renders.WithLabelValues(format, outcome(err)).Inc()
	m.renderSeconds.Observe(d.Seconds())
	if err != nil {
		m.errors.WithLabelValues("render").Inc()
	}
}

// Failed counts an error by kind.
func (m *Metrics) Failed(kind string) { m.errors.WithLabelValues(kind).Inc() }
