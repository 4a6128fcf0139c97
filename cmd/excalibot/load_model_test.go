package main

// The model of the load harness and the fault tests: a fake Ollama answer that draws one box per
// tagged message, spends a few tool calls per run, and names every tag it drew in its summary, so
// what the bot posts can be traced back to the messages that asked for it.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ollama/ollama/api"

	"github.com/excalibot/excalibot/agent/ollamafake"
)

// tagRE matches a message tag "T<thread>-M<message>": every harness message carries one.
var tagRE = regexp.MustCompile(`\bT(\d+)-M(\d+)\b`)

// msgTag names message m of thread th.
func msgTag(th, m int) string { return fmt.Sprintf("T%d-M%d", th, m) }

// tags returns the tags in s, in order of appearance.
func tags(s string) []string { return tagRE.FindAllString(s, -1) }

// answerTags are the tags of the messages a reply's text answers: its summary, before the
// picture's description that a Telegram caption adds after a blank line (which names every box,
// so every earlier message's tag).
func answerTags(text string) []string {
	summary, _, _ := strings.Cut(text, "\n\n")
	return tags(summary)
}

// tagMessage returns the message number of a tag.
func tagMessage(tag string) int {
	m := tagRE.FindStringSubmatch(tag)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[2])
	return n
}

// turnsSinceRequest counts the model's answers since the latest user message: which step of the
// run this request is.
func turnsSinceRequest(req api.ChatRequest) int {
	n := 0
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role != "user"; i-- {
		if req.Messages[i].Role == "assistant" {
			n++
		}
	}
	return n
}

// taggedBoxes is the harness model. A run takes three turns, as a small real drawing does:
//  1. create_element: a box labelled with each tag of the request (merged follow-ups carry several);
//  2. update_element on each new box, and get_scene;
//  3. done, with the summary "Drew T1-M1 T1-M2." naming every tag drawn.
//
// A request without a tag is answered with done at once.
func taggedBoxes(req api.ChatRequest) ollamafake.Turn {
	ts := tags(ollamafake.Request(req))
	step := turnsSinceRequest(req)
	if len(ts) == 0 || step >= 2 {
		sum, _ := json.Marshal(map[string]string{"summary": "Drew " + strings.Join(ts, " ") + "."})
		return ollamafake.Calls(ollamafake.Call("done", string(sum)))
	}
	var calls []api.ToolCall
	for _, tag := range ts {
		id := "box-" + strings.ToLower(tag)
		n := tagMessage(tag)
		if step == 0 {
			args, _ := json.Marshal(map[string]any{"id": id, "type": "rectangle",
				"x": (n % 6) * 220, "y": (n / 6) * 140, "width": 180, "height": 90, "text": tag})
			calls = append(calls, ollamafake.Call("create_element", string(args)))
			continue
		}
		args, _ := json.Marshal(map[string]any{"id": id, "backgroundColor": "#a5d8ff"})
		calls = append(calls, ollamafake.Call("update_element", string(args)))
	}
	if step == 1 {
		calls = append(calls, ollamafake.Call("get_scene", `{}`))
	}
	return ollamafake.Calls(calls...)
}
