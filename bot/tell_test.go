package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/diagram/mermaid"
	"github.com/excalibot/excalibot/store"
)

// worded is an error with words for a person, as agent/ollama, picture and the adapters make them.
type worded struct{ goText, words string }

func (e worded) Error() string       { return e.goText }
func (e worded) UserMessage() string { return e.words }

var _ UserMessager = worded{}

var (
	ollamaDown = worded{"ollama chat: dial tcp 127.0.0.1:11434: connect: connection refused",
		"Ollama is not reachable at http://127.0.0.1:11434; start it with `ollama serve` or set OLLAMA_HOST to where it runs"}
	modelSlow = worded{"the model did not answer within 10s", "the model did not answer within 10s; a smaller model or a longer model timeout may help"}
)

// slowModel is a model request cut by its deadline, with words for the person.
type slowModel struct{ worded }

func (slowModel) Unwrap() error { return context.DeadlineExceeded }

type blind struct{ worded }

func (blind) Is(target error) bool { return target == ErrCannotSee }

// TestFailure: each kind of failure in the words the person reads, and whether they are the plain
// sentence (then the Go text is for the log only).
func TestFailure(t *testing.T) {
	tests := []struct {
		name  string
		step  string
		err   error
		want  string
		plain bool
	}{
		{"words of a drawer, wrapped", "drawing", fmt.Errorf("agent run: %w", ollamaDown),
			"Sorry, drawing failed: Ollama is not reachable at http://127.0.0.1:11434; start it with `ollama serve` or set OLLAMA_HOST to where it runs. Nothing in the diagram changed; you can send the request again.", false},
		{"an adapter's words", "drawing", fmt.Errorf("fetch: %w", UserError("board.png is no longer kept", errors.New("upload u1: expired"))),
			"Sorry, drawing failed: board.png is no longer kept. Nothing in the diagram changed; you can send the request again.", false},
		{"Mermaid refused", "drawing", fmt.Errorf("convert: %w", &mermaid.Error{Line: 2, LineText: "  A[BROKEN(x)] --> B", Message: "expected ']'", Hint: "put a label with brackets in quotes"}),
			"I could not read that Mermaid diagram (line 2: `A[BROKEN(x)] --> B`): expected ']'. Hint: put a label with brackets in quotes. Nothing in the diagram changed; send the corrected diagram to try again.", false},
		{"Mermaid refused without a line", "drawing", &mermaid.Error{Message: "the diagram is empty"},
			"I could not read that Mermaid diagram: the diagram is empty. Nothing in the diagram changed; send the corrected diagram to try again.", false},
		{"a model that cannot see", "drawing", blind{worded{"qwen3:8b: no vision", "qwen3:8b cannot read pictures; models that can: gemma3:4b (pulled here)"}},
			"I cannot redraw this picture: qwen3:8b cannot read pictures; models that can: gemma3:4b (pulled here). Whoever runs me can set EXCALIBOT_VISION_MODEL to one of them. Nothing in the diagram changed.", false},
		{"a bare deadline", "drawing", context.DeadlineExceeded,
			"Sorry, drawing took too long and was stopped. Nothing in the diagram changed; try a smaller request or send it again.", false},
		{"a deadline in Go's words", "drawing", fmt.Errorf("agent run: %w", context.DeadlineExceeded),
			"Sorry, drawing took too long and was stopped. Nothing in the diagram changed; try a smaller request or send it again.", false},
		{"a deadline with words", "drawing", slowModel{modelSlow},
			"Sorry, drawing took too long and was stopped: the model did not answer within 10s; a smaller model or a longer model timeout may help. Nothing in the diagram changed; try a smaller request or send it again.", false},
		{"a restart", "drawing", fmt.Errorf("agent run: %w", context.Canceled),
			"I'm restarting and could not finish your request. Nothing in the diagram changed; please send it again in a minute.", false},
		{"a refusal", "undoing", refuse(store.ErrNothingToUndo, "There is nothing to undo: this is the oldest revision I kept", ""),
			"There is nothing to undo: this is the oldest revision I kept.", false},
		{"a refusal with its tail", "reading bad.excalidraw", cannotImport(errors.New("import bad.excalidraw: not JSON"), "%s is not a diagram I can open", "bad.excalidraw"),
			"bad.excalidraw is not a diagram I can open. Nothing in the diagram changed.", false},
		{"the store down", "undoing", fromStore(errDriver),
			"Sorry, my database did not answer while undoing. Nothing in the diagram changed; please send it again in a minute (if this keeps happening, tell whoever runs me).", true},
		{"the store's deadline", "undoing", fromStore(fmt.Errorf("begin: %w", context.DeadlineExceeded)),
			"Sorry, undoing took too long and was stopped. Nothing in the diagram changed; try a smaller request or send it again.", false},
		{"a conflict", "starting a new diagram", fromStore(&store.ConflictError{Key: thread, Base: 2, Now: 3}),
			"Sorry, starting a new diagram failed: the diagram was changed elsewhere (in the editor?) at the same time. Nothing in the diagram changed; you can send the request again.", false},
		{"a scene too large to keep", "saving the imported diagram", fromStore(&store.TooLargeError{What: "scene", Size: 6 << 20, Limit: 5 << 20}),
			"Sorry, saving the imported diagram failed: the diagram would be 6.0 MB; I keep diagrams up to 5.0 MB. Nothing in the diagram changed; you can send the request again.", false},
		{"what the store names without words", "reading revision 3", fromStore(fmt.Errorf("revision 3: %w", store.ErrLeaseHeld)),
			"Sorry, something went wrong on my side while reading revision 3; it has been logged. Nothing in the diagram changed; you can send the request again.", true},
		{"anything else", "drawing", errors.New("agent run: protocol \"x\" is not one of auto, tools, plan"),
			"Sorry, something went wrong on my side while drawing; it has been logged. Nothing in the diagram changed; you can send the request again.", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, plain := Failure(tt.step, tt.err)
			if got != tt.want || plain != tt.plain {
				t.Errorf("Failure(%q, %v) = %q, %v\nwant %q, %v", tt.step, tt.err, got, plain, tt.want, tt.plain)
			}
		})
	}
}

// TestUnknownFailureIsLogged: a drawer's error without words for people reaches the thread as the
// plain sentence; its Go text is in the log, at error level with the thread, and not in the chat.
func TestUnknownFailureIsLogged(t *testing.T) {
	h := newHarness(t, Options{}, nil)
	var logs strings.Builder
	h.bot.log = slog.New(slog.NewTextHandler(&logs, nil))
	goText := "llama runner: segmentation fault at 0xdeadbeef"
	h.drawer.err = fmt.Errorf("ollama chat: server answered 500: %s", goText)
	h.say(thread, "draw a box")
	h.rec.wait(t, 1)
	r := h.rec.last(thread)
	if want := "Sorry, something went wrong on my side while drawing; it has been logged. Nothing in the diagram changed; you can send the request again."; !r.Error || r.Text != want {
		t.Errorf("reply %q (error %v), want %q", r.Text, r.Error, want)
	}
	if strings.Contains(r.Text, "segmentation") || strings.Contains(r.Text, "ollama chat") {
		t.Errorf("the Go text reached the chat: %q", r.Text)
	}
	if l := logs.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, goText) || !strings.Contains(l, "thread="+thread.String()) {
		t.Errorf("the log lacks the error at error level with the thread:\n%s", l)
	}
}
