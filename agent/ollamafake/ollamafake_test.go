package ollamafake_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/ollama/ollama/api"
)

func client(t *testing.T, url, model string) *ollama.Client {
	t.Helper()
	o, err := ollama.New(ollama.Config{Host: url, Model: model}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func user(text string) []ollama.Message {
	return []ollama.Message{{Role: ollama.RoleUser, Content: text}}
}

// The fake driven through the agent's real Ollama client (github.com/ollama/ollama/api): each
// scripted situation gives the reply or the error the client gets from a real server.
func TestThroughTheClient(t *testing.T) {
	ctx := context.Background()
	f := ollamafake.New(t, ollamafake.Config{Responder: ollamafake.Script(
		ollamafake.Say("hello there, how are you"),
		ollamafake.Calls(ollamafake.Call("get_scene", `{}`)),
		ollamafake.Fail(http.StatusInternalServerError, "runner crashed"),
		ollamafake.Cut(ollamafake.Say("half a reply")),
	)})
	o := client(t, f.URL(), ollamafake.DefaultModel)

	r, err := o.Chat(ctx, user("hi"), nil)
	if err != nil || r.Message.Content != "hello there, how are you" || r.PromptTokens != 1200 {
		t.Errorf("Say: got %q, %d prompt tokens, err %v; want the whole text and 1200", r.Message.Content, r.PromptTokens, err)
	}
	r, err = o.Chat(ctx, user("look"), nil)
	if err != nil || len(r.Message.ToolCalls) != 1 || r.Message.ToolCalls[0].Name != "get_scene" {
		t.Errorf("Calls: got %+v, err %v; want one get_scene call", r.Message.ToolCalls, err)
	}
	if _, err = o.Chat(ctx, user("x"), nil); err == nil || !strings.Contains(err.Error(), "runner crashed") {
		t.Errorf("Fail: err = %v, want the server's message", err)
	}
	if _, err = o.Chat(ctx, user("x"), nil); !errors.Is(err, ollama.ErrStreamCut) {
		t.Errorf("Cut: err = %v, want ErrStreamCut", err)
	}
	if _, err = o.Chat(ctx, user("x"), nil); err == nil || !strings.Contains(err.Error(), "no scripted turn left") {
		t.Errorf("script used up: err = %v, want it said", err)
	}
	if got := len(f.Requests()); got != 5 {
		t.Errorf("recorded %d requests, want 5", got)
	}

	if _, err := client(t, f.URL(), "llama9:1b").Chat(ctx, user("x"), nil); !errors.Is(err, ollama.ErrModelNotFound) {
		t.Errorf("unknown model: err = %v, want ErrModelNotFound", err)
	}

	f.Stop()
	if _, err := o.Chat(ctx, user("x"), nil); !errors.Is(err, ollama.ErrUnreachable) {
		t.Errorf("stopped: err = %v, want ErrUnreachable", err)
	}
	f.Start()
	f.SetResponder(func(api.ChatRequest) ollamafake.Turn { return ollamafake.Say("back") })
	if r, err := o.Chat(ctx, user("x"), nil); err != nil || r.Message.Content != "back" {
		t.Errorf("started again: got %q, err %v; want back", r.Message.Content, err)
	}

	f.SetResponder(func(api.ChatRequest) ollamafake.Turn { return ollamafake.Slow(ollamafake.Say("late"), time.Minute) })
	tctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := o.Chat(tctx, user("x"), nil); err == nil {
		t.Error("slow beyond the deadline: no error")
	}
}

// Boxes answers a request with a create_element call labelled with the request, and the tool
// result with done.
func TestBoxes(t *testing.T) {
	req := api.ChatRequest{Messages: []api.Message{
		{Role: "system", Content: "You draw."},
		{Role: "user", Content: "The current scene:\n<scene>\n</scene>\n\nThe user's request:\n<request>\ndraw a cache\n</request>"},
	}}
	turn := ollamafake.Boxes(req)
	call := turn.Chunks[0].Message.ToolCalls[0]
	if text, _ := call.Function.Arguments.Get("text"); call.Function.Name != "create_element" || text != "draw a cache" {
		t.Errorf("first turn = %s %v, want create_element labelled with the request", call.Function.Name, call.Function.Arguments.ToMap())
	}
	req.Messages = append(req.Messages, api.Message{Role: "assistant", ToolCalls: []api.ToolCall{call}},
		api.Message{Role: "tool", Content: "created box1"})
	turn = ollamafake.Boxes(req)
	call = turn.Chunks[0].Message.ToolCalls[0]
	if sum, _ := call.Function.Arguments.Get("summary"); call.Function.Name != "done" || sum != "Drew a box for: draw a cache." {
		t.Errorf("second turn = %s %v, want done with the summary", call.Function.Name, call.Function.Arguments.ToMap())
	}
}

// Sees answers only a request that carries a picture: one that lost its picture fails loudly.
func TestSeesNeedsAPicture(t *testing.T) {
	f := ollamafake.New(t, ollamafake.Config{Models: []string{ollamafake.VisionToolModel},
		Responder: ollamafake.Sees(ollamafake.Sketch{Nodes: []ollamafake.SketchNode{{ID: "a", Label: "A"}}})})
	_, err := client(t, f.URL(), ollamafake.VisionToolModel).Chat(context.Background(), user("redraw this"), nil)
	if err == nil || !strings.Contains(err.Error(), "the request carries no picture") {
		t.Errorf("err %v, want the fake to say the picture is missing", err)
	}
}
