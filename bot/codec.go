package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// What the conversation's messages and replies are in the store: an incoming message in the inbox,
// a reply in the outbox. Each body carries a version, so a newer program can tell an old row from a
// new one.
const codecVersion = 1

type storedFile struct {
	Name string `json:"name"`
	MIME string `json:"mime,omitempty"`
	Size int64  `json:"size,omitempty"`
	Ref  string `json:"ref,omitempty"`
	// Unnamed: the person gave the file no name.
	Unnamed bool `json:"unnamed,omitempty"`
}

type storedMessage struct {
	V        int          `json:"v"`
	EventID  string       `json:"event,omitempty"`
	ID       string       `json:"id,omitempty"`
	User     string       `json:"user,omitempty"`
	UserName string       `json:"user_name,omitempty"`
	Text     string       `json:"text"`
	Files    []storedFile `json:"files,omitempty"`
	Received int64        `json:"received,omitempty"` // Unix milliseconds
}

// EncodeMessage is msg as the inbox keeps it: everything the run needs later, in any process; a
// file is kept as its reference.
func EncodeMessage(msg Message) ([]byte, error) {
	m := storedMessage{V: codecVersion, EventID: msg.EventID, ID: msg.ID, User: msg.User, UserName: msg.UserName, Text: msg.Text}
	if !msg.Received.IsZero() {
		m.Received = msg.Received.UnixMilli()
	}
	for _, f := range msg.Files {
		m.Files = append(m.Files, storedFile{Name: f.Name, MIME: f.MIME, Size: f.Size, Ref: f.Ref, Unnamed: f.Unnamed})
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode message: %w", err)
	}
	return b, nil
}

// DecodeMessage reads a kept message back; its files fetch through a (nil when the adapter cannot).
func DecodeMessage(key ThreadKey, body []byte, a Adapter) (Message, error) {
	var m storedMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return Message{}, fmt.Errorf("read a kept message: %w", err)
	}
	if m.V != codecVersion {
		return Message{}, fmt.Errorf("read a kept message: version %d, this program reads %d", m.V, codecVersion)
	}
	msg := Message{Key: key, EventID: m.EventID, ID: m.ID, User: m.User, UserName: m.UserName, Text: m.Text}
	if m.Received != 0 {
		msg.Received = time.UnixMilli(m.Received)
	}
	ff, _ := a.(FileFetcher)
	for _, f := range m.Files {
		at := Attachment{Name: f.Name, MIME: f.MIME, Size: f.Size, Ref: f.Ref, Unnamed: f.Unnamed}
		if ff != nil {
			at.Fetch = func(ctx context.Context, max int64) ([]byte, error) { return ff.FetchFile(ctx, at, max) }
		} else {
			at.Fetch = func(context.Context, int64) ([]byte, error) {
				return nil, errors.New("the chat platform's adapter cannot download files")
			}
		}
		msg.Files = append(msg.Files, at)
	}
	return msg, nil
}

type storedReply struct {
	V     int       `json:"v"`
	Reply replyBody `json:"reply"`
}

// replyBody is a Reply as the outbox keeps it. Its names are those the first rows were written
// with (Reply's own field names, when the outbox stored Reply itself), so those rows still read.
type replyBody struct {
	Text    string       `json:"Text"`
	Image   *storedPart  `json:"Image"`
	Files   []storedPart `json:"Files"`
	EditURL string       `json:"EditURL"`
	ViewURL string       `json:"ViewURL"`
	Error   bool         `json:"Error"`
	Alt     string       `json:"Alt"`
	Title   string       `json:"Title"`
	ReplyTo string       `json:"ReplyTo"`
}

// storedPart is a File of a kept reply.
type storedPart struct {
	Name    string `json:"Name"`
	MIME    string `json:"MIME"`
	Content []byte `json:"Content"`
}

func partOf(f File) storedPart  { return storedPart{Name: f.Name, MIME: f.MIME, Content: f.Content} }
func (p storedPart) file() File { return File{Name: p.Name, MIME: p.MIME, Content: p.Content} }

// EncodeReply is r as the outbox keeps it.
func EncodeReply(r Reply) ([]byte, error) {
	body := replyBody{Text: r.Text, EditURL: r.EditURL, ViewURL: r.ViewURL, Error: r.Error, Alt: r.Alt, Title: r.Title, ReplyTo: r.ReplyTo}
	if r.Image != nil {
		img := partOf(*r.Image)
		body.Image = &img
	}
	if r.Files != nil {
		body.Files = make([]storedPart, len(r.Files))
		for i, f := range r.Files {
			body.Files[i] = partOf(f)
		}
	}
	b, err := json.Marshal(storedReply{V: codecVersion, Reply: body})
	if err != nil {
		return nil, fmt.Errorf("encode reply: %w", err)
	}
	return b, nil
}

// DecodeReply reads a kept reply back.
func DecodeReply(body []byte) (Reply, error) {
	var s storedReply
	if err := json.Unmarshal(body, &s); err != nil {
		return Reply{}, fmt.Errorf("read a kept reply: %w", err)
	}
	if s.V != codecVersion {
		return Reply{}, fmt.Errorf("read a kept reply: version %d, this program reads %d", s.V, codecVersion)
	}
	b := s.Reply
	r := Reply{Text: b.Text, EditURL: b.EditURL, ViewURL: b.ViewURL, Error: b.Error, Alt: b.Alt, Title: b.Title, ReplyTo: b.ReplyTo}
	if b.Image != nil {
		img := b.Image.file()
		r.Image = &img
	}
	if b.Files != nil {
		r.Files = make([]File, len(b.Files))
		for i, p := range b.Files {
			r.Files[i] = p.file()
		}
	}
	return r, nil
}
