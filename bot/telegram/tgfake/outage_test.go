package tgfake

import (
	"testing"

	"github.com/go-telegram/bot/models"
)

// Down answers 502 until Up; failures queued with Fail outlive the outage.
func TestDownUntilUp(t *testing.T) {
	s := New(token)
	defer s.Close()
	s.AddChat(models.Chat{ID: 5, Type: models.ChatTypePrivate})
	send := func() (int, envelope) {
		return call(t, s, "sendMessage", "application/json", `{"chat_id":5,"text":"hi"}`)
	}
	s.Down("sendMessage")
	for range 3 {
		if code, e := send(); code != 502 || e.OK || e.ErrorCode != 502 {
			t.Fatalf("while down: %d %+v, want 502", code, e)
		}
	}
	if code, _ := call(t, s, "getMe", "application/json", `{}`); code != 200 {
		t.Errorf("getMe while sendMessage is down: %d, want 200", code)
	}
	s.Fail("sendMessage", Failure{Code: 429, RetryAfter: 3})
	s.Up()
	if code, e := send(); code != 429 || e.Parameters.RetryAfter != 3 {
		t.Errorf("after Up, the queued failure: %d %+v, want 429 retry_after 3", code, e)
	}
	if code, e := send(); code != 200 || !e.OK {
		t.Errorf("after Up: %d %+v, want 200", code, e)
	}
	if got := len(s.BotMessages(5)); got != 1 {
		t.Errorf("%d messages in the chat, want 1 (only the call after the outage)", got)
	}
}
