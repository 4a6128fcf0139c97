package slackfake

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"

	"github.com/excalibot/excalibot/internal/waitfor"
)

// dial opens a Socket Mode connection as a client does and reads its hello.
func dial(t *testing.T, f *Server) *websocket.Conn {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(f.URL(), "http")+"/link/?ticket=t", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	var hello struct{ Type string }
	if err := ws.ReadJSON(&hello); err != nil || hello.Type != "hello" {
		t.Fatalf("hello: %+v %v", hello, err)
	}
	return ws
}

// Events go over the connection chosen, and not over a closed one.
func TestDeliverOnAConnection(t *testing.T) {
	f := New(t, Config{})
	ctx := context.Background()
	one, two := dial(t, f), dial(t, f)
	waitUntil(t, "connections 1 and 2", func() bool { return slices.Equal(f.Sockets(), []int{1, 2}) }, func() any { return f.Sockets() })
	ev := f.Post(UserMessage{Channel: "D1", Text: "hi"}).Events[0]
	env, err := f.DeliverOn(ctx, 2, ev, DeliverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		EnvelopeID string `json:"envelope_id"`
	}
	if err := two.ReadJSON(&got); err != nil || got.EnvelopeID != env {
		t.Fatalf("connection 2 read %+v %v, want envelope %s", got, err, env)
	}
	if err := two.WriteJSON(map[string]string{"envelope_id": env}); err != nil {
		t.Fatal(err)
	}
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := f.WaitAck(actx, env); err != nil {
		t.Fatal(err)
	}
	_ = one.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if err := one.ReadJSON(&got); err == nil {
		t.Errorf("connection 1 read %+v; the envelope was for connection 2", got)
	}
	two.Close()
	waitUntil(t, "connection 1 alone", func() bool { return slices.Equal(f.Sockets(), []int{1}) }, func() any { return f.Sockets() })
	if _, err := f.DeliverOn(ctx, 2, ev, DeliverOptions{}); err == nil {
		t.Error("DeliverOn a closed connection succeeded")
	}
}

// A held call waits until Release, or is dropped when its client leaves; Down answers 503 until Up.
func TestHoldAndOutage(t *testing.T) {
	f := New(t, Config{})
	ctx := context.Background()
	api := slack.New(f.Config().BotToken, slack.OptionAPIURL(f.APIURL()))
	post := func(ctx context.Context, channel string) error {
		_, _, err := api.PostMessageContext(ctx, channel, slack.MsgOptionText("x", false))
		return err
	}

	h := f.Hold("chat.postMessage", func(form url.Values) bool { return form.Get("channel") == "C1" })
	if err := post(ctx, "C2"); err != nil {
		t.Fatalf("a call the hold does not match: %v", err)
	}
	gone, cancel := context.WithCancel(ctx)
	dropped := make(chan error, 1)
	go func() { dropped <- post(gone, "C1") }()
	<-h.Arrived()
	cancel()
	if err := <-dropped; err == nil {
		t.Error("a held call whose client left succeeded")
	}
	waitUntil(t, "no held call", func() bool { return h.Waiting() == 0 }, func() any { return h.Waiting() })
	released := make(chan error, 1)
	go func() { released <- post(ctx, "C1") }()
	waitUntil(t, "one held call", func() bool { return h.Waiting() == 1 }, func() any { return h.Waiting() })
	if len(released) > 0 {
		t.Fatalf("a held call returned before Release: %v", <-released)
	}
	h.Release()
	if err := <-released; err != nil {
		t.Errorf("a released call: %v", err)
	}
	if n := len(f.Thread("C1", "")); n != 1 {
		t.Errorf("C1 has %d messages, want 1: the dropped call must leave nothing", n)
	}

	f.Down()
	var sc slack.StatusCodeError
	if err := post(ctx, "C1"); !errors.As(err, &sc) || sc.Code != 503 {
		t.Errorf("while down: %v, want status 503", err)
	}
	if calls := f.Calls("chat.postMessage"); calls[len(calls)-1].Status != 503 {
		t.Errorf("the refused call is recorded with status %d, want 503", calls[len(calls)-1].Status)
	}
	f.Up()
	if err := post(ctx, "C1"); err != nil {
		t.Errorf("after Up: %v", err)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool, got func() any) {
	t.Helper()
	waitfor.Until(t, 5*time.Second, what, cond, func() string { return fmt.Sprint(got()) })
}
