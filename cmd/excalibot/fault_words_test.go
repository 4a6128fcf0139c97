package main

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/jpeg"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/excalibot/excalibot/config"
	"github.com/excalibot/excalibot/internal/pgtest"
)

// speaker is a person on a chat platform: they start a thread, say more in it, and read what the
// bot posted there.
type speaker interface {
	start(t *testing.T, user int, text string, file *upload) *chatThread
	say(t *testing.T, th *chatThread, user int, text string)
	replies(th *chatThread) (answers []answer, texts []string, busy bool)
}

// platformCase is a platform of TestFaultWords: its person, and a discussion the bot cannot read
// there with the words that say so.
type platformCase struct {
	name       string
	p          speaker
	discussion func(t *testing.T) (th *chatThread, want string)
}

// TestFaultWords: each kind of failure, sent through the real Slack, Telegram and web chat
// adapters of one serve, reaches the person in the same words on every platform: Ollama down, a
// model not pulled, a model without tools, a Mermaid syntax error, a refused picture, a broken
// .excalidraw import, a discussion the bot cannot read, a command with nothing to do, an error the
// bot has no words for (the plain sentence; Go's words only in the log) and the database down
// under a run (with PostgreSQL installed; SQLite cannot be taken down from outside).
func TestFaultWords(t *testing.T) {
	var pg *pgtest.Server
	dbURL := ""
	switch s, err := pgtest.Start(t.Context()); {
	case errors.Is(err, pgtest.ErrNoServer):
	case err != nil:
		t.Fatal(err)
	default:
		pg = s
		t.Cleanup(func() { _ = pg.Stop() })
		dsn, err := pg.CreateDB(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		dbURL = pgURL(t, dsn)
	}
	sl, tg := newSlack(t), newTelegram(t)
	e := startE2E(t, func(c *config.Config) {
		sl.configure(c, "socket")
		tg.configure(c, "")
		c.Protocol = "tools" // a model without tools is then a failure, not a switch to typed plans
		c.UserRatePerMinute, c.ChatRatePerMinute = 1e6, 1e6
		if dbURL != "" {
			c.Database = dbURL
		}
	})
	sl.ready(t, e)
	tg.ready(t)
	web := newWebChat(e)

	platforms := []platformCase{
		{"slack", sl, func(t *testing.T) (*chatThread, string) {
			// A thread the bot is in, whose channel it can no longer read.
			th := sl.start(t, 20, "draw a box", nil)
			waitSaid(t, sl, th, "the first picture", drew("draw a box"))
			sl.fake.Fail("conversations.replies", "not_in_channel", 1)
			sl.say(t, th, 20, "draw this thread")
			return th, "Sorry, I could not read the earlier messages of this thread: I am not in this channel. Nothing in the diagram changed; paste what should go into the diagram, or describe it."
		}},
		{"telegram", tg, func(t *testing.T) (*chatThread, string) {
			// A group whose messages the bot does not see: its privacy mode is on.
			return tg.start(t, 1, "draw this thread", nil), "I found no earlier messages in this thread to draw from. " + tgNoDiscussion
		}},
		{"web chat", web, func(t *testing.T) (*chatThread, string) {
			return web.start(t, 20, "draw this thread", nil),
				"I found no earlier messages in this thread to draw from. The chat page reads the messages of this thread sent since the server last started; there are none before this one."
		}},
	}
	for _, pc := range platforms {
		t.Run(pc.name, func(t *testing.T) { faultWords(t, e, pc, pg) })
	}
}

// tgNoDiscussion is the Telegram adapter's note for a discussion it holds no message of.
const tgNoDiscussion = "I only see the messages in this group that mention me, reply to me or start with a command, " +
	"because my privacy mode is on. To let me read the whole discussion, whoever runs me can send " +
	"/setprivacy to @BotFather, choose me and pick Disable (or make me an admin of the group); " +
	"Telegram applies it only after I am removed from the group and added again."

const unchangedRetry = "Nothing in the diagram changed; you can send the request again."

func faultWords(t *testing.T, e *e2e, pc platformCase, pg *pgtest.Server) {
	p := pc.p
	failWith := func(status int, msg string) func() {
		e.ollama.SetResponder(func(api.ChatRequest) ollamafake.Turn { return ollamafake.Fail(status, msg) })
		return func() { e.ollama.SetResponder(ollamafake.Boxes) }
	}

	t.Run("ollama down", func(t *testing.T) {
		e.ollama.Stop()
		defer e.ollama.Start()
		th := p.start(t, 10, "draw a queue", nil)
		waitSaid(t, p, th, "Ollama down", is("Sorry, drawing failed: Ollama is not reachable at "+e.ollama.URL()+
			"; start it with `ollama serve` or set OLLAMA_HOST to where it runs. "+unchangedRetry))
	})
	t.Run("model not pulled", func(t *testing.T) {
		defer failWith(http.StatusNotFound, fmt.Sprintf("model '%s' not found", ollamafake.DefaultModel))()
		th := p.start(t, 11, "draw a queue", nil)
		waitSaid(t, p, th, "the model not pulled", is(fmt.Sprintf("Sorry, drawing failed: model %[1]s is not pulled into Ollama at %[2]s; run `ollama pull %[1]s`. %[3]s",
			ollamafake.DefaultModel, e.ollama.URL(), unchangedRetry)))
	})
	t.Run("model without tools", func(t *testing.T) {
		defer failWith(http.StatusBadRequest, ollamafake.DefaultModel+" does not support tools")()
		th := p.start(t, 12, "draw a queue", nil)
		waitSaid(t, p, th, "the model without tools", is(fmt.Sprintf("Sorry, drawing failed: model %s cannot call tools; use a model that can, e.g. %s. %s",
			ollamafake.DefaultModel, ollama.ToolModels, unchangedRetry)))
	})
	t.Run("mermaid syntax error", func(t *testing.T) {
		th := p.start(t, 13, "sequenceDiagram\n  Alice->>Bob hi", nil)
		waitSaid(t, p, th, "Mermaid's refusal", func(s string) bool {
			return strings.HasPrefix(s, "I could not read that Mermaid diagram (line 2: `Alice->>Bob hi`): ") && strings.Contains(s, ". Hint: ") &&
				strings.HasSuffix(s, ". Nothing in the diagram changed; send the corrected diagram to try again.")
		})
	})
	t.Run("refused picture", func(t *testing.T) {
		th := p.start(t, 2, "", &upload{Name: "board.jpg", Data: cutPhoto(t)})
		waitSaid(t, p, th, "the picture refused", is("board.jpg: the JPEG is cut short: the file ends before the picture does; send it again. Nothing in the diagram changed."))
	})
	t.Run("broken import", func(t *testing.T) {
		th := p.start(t, 3, "", &upload{Name: "broken.excalidraw", Data: []byte(`{"type":"excalidraw","elements":`)})
		waitSaid(t, p, th, "the import refused", is("broken.excalidraw is not a diagram I can open; save it from Excalidraw again and send it. Nothing in the diagram changed."))
	})
	t.Run("discussion unreadable", func(t *testing.T) {
		th, want := pc.discussion(t)
		waitSaid(t, p, th, "the discussion refused", is(want))
	})
	t.Run("command refused", func(t *testing.T) {
		th := p.start(t, 14, "draw a box", nil)
		waitSaid(t, p, th, "the picture", drew("draw a box"))
		p.say(t, th, 14, "undo")
		waitSaid(t, p, th, "undo refused", is("There is nothing to undo: this is the oldest revision I kept."))
		p.say(t, th, 14, "export pdf")
		waitSaid(t, p, th, "export refused", is(`I can export png, svg or excalidraw, not "pdf". Say help to see what I understand.`))
	})
	t.Run("unknown error", func(t *testing.T) {
		const goText = "llama runner process has terminated: signal: segmentation fault (core dumped)"
		defer failWith(http.StatusInternalServerError, goText)()
		th := p.start(t, 15, "draw a queue", nil)
		waitSaid(t, p, th, "the plain sentence", is("Sorry, something went wrong on my side while drawing; it has been logged. "+unchangedRetry))
		if _, texts, _ := p.replies(th); hasText(texts, "segmentation") || hasText(texts, "ollama chat") {
			t.Errorf("Go's words reached the chat: %q", texts)
		}
		if !logged(e.logs.String(), "level=ERROR", "thread="+platformOf(pc.name)+"/", goText) {
			t.Errorf("serve's log has no error line with the thread and %q", goText)
		}
	})
	t.Run("database down", func(t *testing.T) {
		if pg == nil {
			t.Skip("needs PostgreSQL (internal/pgtest): SQLite cannot be taken down under a running bot")
		}
		// The database goes away during the model's first turn; the run's end cannot be recorded.
		// It comes back before the next case, whatever this one found.
		var once sync.Once
		killed := make(chan error, 1)
		e.ollama.SetResponder(func(req api.ChatRequest) ollamafake.Turn {
			if strings.Contains(ollamafake.Request(req), "through the outage") {
				once.Do(func() { killed <- pg.Kill() })
			}
			return ollamafake.Boxes(req)
		})
		defer e.ollama.SetResponder(ollamafake.Boxes)
		defer func() {
			select {
			case err := <-killed:
				if err != nil {
					t.Fatal(err)
				}
			default:
				return // never killed
			}
			if err := pg.Restart(t.Context()); err != nil {
				t.Fatal(err)
			}
			checkHealthy(t, e.addr)
		}()
		th := p.start(t, 16, "draw a box through the outage", nil)
		waitSaid(t, p, th, "the database named", is("Sorry, my database did not answer while saving the diagram. Nothing in the diagram changed; "+
			"please send it again in a minute (if this keeps happening, tell whoever runs me)."))
	})
}

// waitSaid waits until th shows no working sign and one of the bot's texts, as the person reads
// it, is what want accepts; it returns that text.
func waitSaid(t *testing.T, p speaker, th *chatThread, what string, want func(string) bool) string {
	t.Helper()
	var texts []string
	var said string
	waitFor(t, what, func() bool {
		var busy bool
		_, texts, busy = p.replies(th)
		for _, s := range texts {
			if s = read(s); want(s) {
				said = s
				return !busy
			}
		}
		return false
	}, func() string { return fmt.Sprintf("texts %q", texts) })
	return said
}

// read is a reply as a person reads it: Slack shows its escapes as the characters, and its
// warning sign is not words.
func read(s string) string { return strings.TrimPrefix(html.UnescapeString(s), ":warning: ") }

func is(want string) func(string) bool { return func(s string) bool { return s == want } }

// drew accepts the summary of the picture the fake model draws for prompt.
func drew(prompt string) func(string) bool {
	return func(s string) bool { return strings.HasPrefix(s, "Drew a box for: "+prompt+".") }
}

// logged reports whether a line of logs holds every one of parts.
func logged(logs string, parts ...string) bool {
	for _, l := range strings.Split(logs, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			return true
		}
	}
	return false
}

// platformOf is the thread keys' platform of a platform case.
func platformOf(name string) string {
	if name == "web chat" {
		return "web"
	}
	return name
}

// cutPhoto is a photo whose file ends halfway, as an interrupted upload leaves it.
func cutPhoto(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 320, 240))
	for y := range 240 {
		for x := range 320 {
			img.Set(x, y, color.RGBA{uint8(x * y), uint8(x + 3*y), uint8(7 * x), 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()[:b.Len()/2]
}
