package tgfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
)

const token = "7:fake"

type envelope struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

func call(t *testing.T, s *Server, method, contentType, body string) (int, envelope) {
	t.Helper()
	code, e, err := post(s, method, contentType, body)
	if err != nil {
		t.Fatal(err)
	}
	return code, e
}

// post is call for goroutines other than the test's, which must not call t.Fatal.
func post(s *Server, method, contentType, body string) (int, envelope, error) {
	resp, err := http.Post(s.URL+"/bot"+token+"/"+method, contentType, strings.NewReader(body))
	if err != nil {
		return 0, envelope{}, err
	}
	defer resp.Body.Close()
	var e envelope
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		return 0, envelope{}, fmt.Errorf("%s: undecodable answer: %w", method, err)
	}
	return resp.StatusCode, e, nil
}

func TestEnvelopesAndBodies(t *testing.T) {
	s := New(token)
	defer s.Close()
	s.AddChat(models.Chat{ID: 5, Type: models.ChatTypePrivate})
	tests := []struct {
		name, method, ct, body string
		wantCode               int
		wantDesc               string
	}{
		{"JSON body", "sendMessage", "application/json", `{"chat_id":5,"text":"hi"}`, 200, ""},
		{"form body", "sendMessage", "application/x-www-form-urlencoded", url.Values{"chat_id": {"5"}, "text": {"hi"}}.Encode(), 200, ""},
		{"empty text", "sendMessage", "application/json", `{"chat_id":5,"text":" "}`, 400, "Bad Request: message text is empty"},
		{"unknown chat", "sendMessage", "application/json", `{"chat_id":6,"text":"x"}`, 400, "Bad Request: chat not found"},
		{"text too long", "sendMessage", "application/json", `{"chat_id":5,"text":"` + strings.Repeat("😀", 2049) + `"}`, 400, "Bad Request: message is too long"},
		{"copy_text button", "sendMessage", "application/json", `{"chat_id":5,"text":"x","reply_markup":{"inline_keyboard":[[{"text":"Open","url":"https://a.example","copy_text":{"text":""}}]]}}`, 400, "Bad Request: BUTTON_COPY_TEXT_INVALID"},
		{"localhost button", "sendMessage", "application/json", `{"chat_id":5,"text":"x","reply_markup":{"inline_keyboard":[[{"text":"Open","url":"http://localhost:8080/x"}]]}}`, 400, "Bad Request: BUTTON_URL_INVALID"},
		{"reply to nothing", "sendMessage", "application/json", `{"chat_id":5,"text":"x","reply_parameters":{"message_id":99}}`, 400, "Bad Request: message to be replied not found"},
		{"topic outside a forum", "sendMessage", "application/json", `{"chat_id":5,"text":"x","message_thread_id":3}`, 400, "Bad Request: message thread not found"},
		{"unknown method", "sendDice", "application/json", `{}`, 404, "Not Found"},
	}
	for _, tc := range tests {
		code, e := call(t, s, tc.method, tc.ct, tc.body)
		if code != tc.wantCode || e.OK != (tc.wantCode == 200) || tc.wantCode != 200 && (e.ErrorCode != tc.wantCode || e.Description != tc.wantDesc) {
			t.Errorf("%s: got %d %+v, want %d %q", tc.name, code, e, tc.wantCode, tc.wantDesc)
		}
	}
	if got := len(s.BotMessages(5)); got != 2 {
		t.Errorf("chat shows %d bot messages, want the 2 accepted ones", got)
	}

	resp, err := http.Post(s.URL+"/botWRONG/getMe", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("wrong token: got %d, want 401", resp.StatusCode)
	}

	s.Fail("sendMessage", Failure{Code: 429, RetryAfter: 7})
	code, e := call(t, s, "sendMessage", "application/json", `{"chat_id":5,"text":"x"}`)
	if code != 429 || e.Parameters.RetryAfter != 7 || e.Description != "Too Many Requests: retry after 7" {
		t.Errorf("injected 429: got %d %+v", code, e)
	}
	if code, _ := call(t, s, "sendMessage", "application/json", `{"chat_id":5,"text":"x"}`); code != 200 {
		t.Errorf("after the injected failure: got %d, want 200", code)
	}
}

func TestGetUpdatesBlocksAndConfirms(t *testing.T) {
	s := New(token)
	defer s.Close()
	s.AddChat(models.Chat{ID: 5, Type: models.ChatTypePrivate})

	got := make(chan []models.Update, 1)
	go func() {
		_, e, _ := post(s, "getUpdates", "application/json", `{"timeout":30}`)
		var us []models.Update
		json.Unmarshal(e.Result, &us)
		got <- us
	}()
	select {
	case us := <-got:
		t.Fatalf("getUpdates answered %v before anything was queued", us)
	case <-time.After(50 * time.Millisecond):
	}
	sent := s.Send(Post{Chat: 5, From: models.User{ID: 1, FirstName: "A"}, Text: "/draw@draw_bot x"})
	us := <-got
	if len(us) != 1 || us[0].ID != sent.UpdateID || us[0].Message.Text != "/draw@draw_bot x" {
		t.Fatalf("got %+v, want the queued update", us)
	}
	if e := us[0].Message.Entities; len(e) != 1 || e[0].Type != models.MessageEntityTypeBotCommand || e[0].Length != 14 {
		t.Errorf("entities %+v, want one bot_command of 14 units", e)
	}
	// Not confirmed yet: delivered again; an offset past it confirms it.
	_, e := call(t, s, "getUpdates", "application/json", `{"timeout":0}`)
	json.Unmarshal(e.Result, &us)
	if len(us) != 1 {
		t.Errorf("unconfirmed update: got %d updates, want it again", len(us))
	}
	_, e = call(t, s, "getUpdates", "application/json", `{"timeout":0,"offset":`+itoa(sent.UpdateID+1)+`}`)
	json.Unmarshal(e.Result, &us)
	if len(us) != 0 {
		t.Errorf("confirmed update: got %d updates, want none", len(us))
	}

	call(t, s, "setWebhook", "application/json", `{"url":"https://bot.example.com/telegram/webhook"}`)
	if code, e := call(t, s, "getUpdates", "application/json", `{}`); code != 409 {
		t.Errorf("getUpdates with a webhook: got %d %s, want 409", code, e.Description)
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestFilesAndPhotos(t *testing.T) {
	s := New(token)
	defer s.Close()
	s.AddChat(models.Chat{ID: 5, Type: models.ChatTypePrivate})
	s.Send(Post{Chat: 5, From: models.User{ID: 1}, Document: &Upload{Name: "a.excalidraw", Data: []byte("{}")}})
	s.Send(Post{Chat: 5, From: models.User{ID: 1}, Document: &Upload{Name: "big.bin", Data: []byte("x")}, DocumentSize: 21 << 20})
	us := s.PendingUpdates()
	_, e := call(t, s, "getFile", "application/json", `{"file_id":"`+us[0].Message.Document.FileID+`"}`)
	var f models.File
	json.Unmarshal(e.Result, &f)
	resp, err := http.Get(s.URL + "/file/bot" + token + "/" + f.FilePath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "{}" {
		t.Errorf("download: got %q, want the file", body)
	}
	if code, e := call(t, s, "getFile", "application/json", `{"file_id":"`+us[1].Message.Document.FileID+`"}`); code != 400 || e.Description != "Bad Request: file is too big" {
		t.Errorf("getFile over 20 MB: got %d %q", code, e.Description)
	}
}

func TestSecondPollerConflicts(t *testing.T) {
	s := New(token)
	defer s.Close()
	first := make(chan int, 1)
	go func() {
		code, _, _ := post(s, "getUpdates", "application/json", `{"timeout":30}`)
		first <- code
	}()
	// Wait until the first poll is blocked, then poll again, as a second bot instance would.
	if !s.WaitFor(5*time.Second, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.pollGen == 1
	}) {
		t.Fatal("first poll did not arrive")
	}
	go post(s, "getUpdates", "application/json", `{"timeout":1}`)
	select {
	case code := <-first:
		if code != 409 {
			t.Errorf("earlier poller: got %d, want 409", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the earlier poller was not terminated")
	}
}

// TestPrivacyMode: getMe reports can_read_all_group_messages as privacy mode has it, and a group's
// chatter reaches the bot only with privacy mode off; commands, mentions and replies to the bot
// always do.
func TestPrivacyMode(t *testing.T) {
	s := New(token)
	defer s.Close()
	s.AddChat(models.Chat{ID: -9, Type: models.ChatTypeSupergroup})
	ann := models.User{ID: 1, FirstName: "Ann"}
	for _, on := range []bool{true, false} {
		s.SetPrivacy(on)
		_, e := call(t, s, "getMe", "", "")
		var me struct {
			CanReadAll *bool `json:"can_read_all_group_messages"`
		}
		if err := json.Unmarshal(e.Result, &me); err != nil {
			t.Fatal(err)
		}
		if got := me.CanReadAll != nil && *me.CanReadAll; got != !on {
			t.Errorf("privacy mode %v: getMe says can_read_all_group_messages %v (%s), want %v", on, got, e.Result, !on)
		}
		before := len(s.PendingUpdates())
		s.Send(Post{Chat: -9, From: ann, Text: "just chatting"})
		s.Send(Post{Chat: -9, From: ann, Text: "@draw_bot draw it"})
		s.Send(Post{Chat: -9, From: ann, Text: "/undo"})
		want := map[bool]int{true: 2, false: 3}[on]
		if got := len(s.PendingUpdates()) - before; got != want {
			t.Errorf("privacy mode %v: %d updates for the bot, want %d", on, got, want)
		}
	}
}
