package slack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/internal/logkey"
)

const (
	workingReaction = "eyes"
	workingText     = bot.WorkingText
	maxButtonURL    = 3000
)

// Working shows that work on msg has started. In an assistant thread it is Slack's native status
// ("is drawing…"); elsewhere, or when Slack refuses that, the "eyes" reaction on msg and a status
// line in its thread. A part that fails is logged and left out; the error is returned only when
// neither sign could be shown.
func (a *Adapter) Working(ctx context.Context, msg bot.Message) (bot.Status, error) {
	if msg.Key.Thread != "" {
		a.threads.add(msg.Key.String())
	}
	if a.isAssistantThread(ctx, msg.Key) {
		if st, ok := a.assistantWorking(ctx, msg); ok {
			return st, nil
		}
	}
	st := &status{a: a, channel: msg.Key.Channel, msgTS: msg.ID}
	var errs []error
	if msg.ID != "" {
		err := a.api.AddReactionContext(ctx, workingReaction, slack.NewRefToMessage(msg.Key.Channel, msg.ID))
		switch {
		case err == nil || isSlackError(err, "already_reacted"):
			st.reacted = true
		default:
			errs = append(errs, fmt.Errorf("add reaction: %w", err))
		}
	}
	_, ts, err := a.api.PostMessageContext(ctx, msg.Key.Channel,
		slack.MsgOptionText(workingText, false), slack.MsgOptionTS(msg.Key.Thread))
	if err != nil {
		errs = append(errs, fmt.Errorf("post status: %w", err))
	} else {
		st.statusTS, st.lastText = ts, workingText
	}
	if !st.reacted && st.statusTS == "" {
		return nil, fmt.Errorf("slack working signs in %s: %w", msg.Key, errors.Join(errs...))
	}
	if len(errs) > 0 {
		a.log.Warn("slack: a working sign is missing", logkey.Thread, msg.Key.String(), logkey.Err, errors.Join(errs...))
	}
	return st, nil
}

// status is the working signs of one message: the reaction and the status line.
type status struct {
	a        *Adapter
	channel  string
	msgTS    string // the message that got the reaction
	reacted  bool
	statusTS string // the status line; empty when it could not be posted

	mu       sync.Mutex
	lastText string
	finished bool
}

var (
	_ bot.SignedStatus = (*status)(nil)
	_ bot.SignClearer  = (*Adapter)(nil)
)

// Update edits the status line, its first letter a capital: the line stands alone in the thread
// ("Drawing 4 boxes and 3 arrows…"), where the core's step reads as the end of a sentence. The
// engine spaces the edits (chat.update is rate limited per workspace); the same text is not sent
// again.
func (s *status) Update(ctx context.Context, text string) error {
	text = bot.StatusLine(text)
	s.mu.Lock()
	if s.finished || s.statusTS == "" || text == s.lastText {
		s.mu.Unlock()
		return nil
	}
	s.lastText = text
	s.mu.Unlock()
	_, _, _, err := s.a.api.UpdateMessageContext(ctx, s.channel, s.statusTS,
		slack.MsgOptionText(truncate(escapeText(text), maxSectionText), false))
	if err != nil {
		return fmt.Errorf("slack update status: %w", err)
	}
	return nil
}

// Finish removes the reaction and deletes the status line; the reply is already in the thread.
func (s *status) Finish(ctx context.Context) error {
	s.mu.Lock()
	if s.finished {
		s.mu.Unlock()
		return nil
	}
	s.finished = true
	s.mu.Unlock()
	var errs []error
	if s.reacted {
		err := s.a.api.RemoveReactionContext(ctx, workingReaction, slack.NewRefToMessage(s.channel, s.msgTS))
		if err != nil && !isSlackError(err, "no_reaction", "message_not_found") {
			errs = append(errs, fmt.Errorf("remove reaction: %w", err))
		}
	}
	if s.statusTS != "" {
		_, _, err := s.a.api.DeleteMessageContext(ctx, s.channel, s.statusTS)
		if err != nil && !isSlackError(err, "message_not_found") {
			errs = append(errs, fmt.Errorf("delete status: %w", err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("slack finish: %w", err)
	}
	return nil
}

// Sign implements bot.SignedStatus: the reacted message's ts and the status line's ts ("-" for a
// sign that is not there), separated by a space; the channel is in the thread key.
func (s *status) Sign() string {
	r, st := "-", "-"
	if s.reacted {
		r = s.msgTS
	}
	if s.statusTS != "" {
		st = s.statusTS
	}
	return r + " " + st
}

// ClearSign implements bot.SignClearer: it removes the reaction and deletes the status line of a
// run that a dead process left behind, or clears its assistant thread's status.
func (a *Adapter) ClearSign(ctx context.Context, key bot.ThreadKey, sign string) error {
	if sign == assistantSign {
		if key.Thread == "" {
			return fmt.Errorf("slack: an assistant status in %s, which is no thread", key)
		}
		return (&assistantStatus{a: a, key: key}).Finish(ctx)
	}
	r, st, ok := strings.Cut(sign, " ")
	if !ok || r == "" || st == "" {
		return fmt.Errorf("slack: %q is not a working sign", sign)
	}
	s := &status{a: a, channel: key.Channel}
	if r != "-" {
		s.msgTS, s.reacted = r, true
	}
	if st != "-" {
		s.statusTS = st
	}
	return s.Finish(ctx)
}

var _ bot.StepSender = (*Adapter)(nil)

// Send posts a reply into the thread named by key, in one go (SendSteps without a record).
func (a *Adapter) Send(ctx context.Context, key bot.ThreadKey, r bot.Reply) error {
	return a.SendSteps(ctx, key, r, nil, func(string, ...bot.IndexEntry) error { return nil })
}

// SendSteps implements bot.StepSender. A reply is at most two steps. Files (the PNG first) are
// uploaded with files.getUploadURLExternal and the upload URL, then shared into the thread with
// one files.completeUploadExternal call: recorded as "files:ID,ID…". Without links the summary is
// the files' comment; with an editor or view link it follows as a Block Kit message with buttons,
// recorded by its ts. When Slack refuses the files for good, the summary and the links go out with
// a word on what is missing (recorded as "note:ts"), so the person is not left waiting; the error
// goes to the operator's log. Errors are marked for the outbox: a rate limit with its
// Retry-After, a refusal that will not change as permanent. Every picture (the PNG, an SVG
// export) carries Reply.Alt as its alt text; files keep the names the core gave them. In an
// assistant thread the reply's title becomes the thread's.
func (a *Adapter) SendSteps(ctx context.Context, key bot.ThreadKey, r bot.Reply, posted []string, record bot.Record) error {
	if key.Thread != "" {
		a.threads.add(key.String())
	}
	if err := a.sendSteps(ctx, key, r, posted, record); err != nil {
		return err
	}
	// After the reply, so a title never names a diagram the thread does not show yet.
	if r.Title != "" {
		a.setTitle(ctx, key, r.Title)
	}
	return nil
}

func (a *Adapter) sendSteps(ctx context.Context, key bot.ThreadKey, r bot.Reply, posted []string, record bot.Record) error {
	text := escapeText(r.Text)
	if r.Error && text != "" {
		text = ":warning: " + text
	}
	var files []bot.File
	if r.Image != nil {
		files = append(files, *r.Image)
	}
	files = append(files, r.Files...)
	withLinks := r.EditURL != "" || r.ViewURL != ""
	parts := messageParts(text, withLinks)

	var uploaded []slack.FileSummary
	switch {
	case len(files) == 0 && text == "" && !withLinks:
		return bot.Permanent(errors.New("slack send: empty reply"))
	case len(files) == 0:
		return a.postParts(ctx, key, r, parts, 0, posted, nil, record, plainStep)
	case len(posted) > 0 && strings.HasPrefix(posted[0], "note:"):
		// The files were refused: the rest of the text with its note goes on.
		_, code, _ := strings.Cut(strings.TrimPrefix(posted[0], "note:"), " ")
		return a.postNoted(ctx, key, r, text, code, posted, record)
	case len(posted) > 0:
		uploaded = uploadedFiles(posted[0], files)
	default:
		comment := ""
		if !withLinks && len(parts) > 0 {
			comment = parts[0][0] // the rest follows as messages
		}
		up, err := a.uploadFiles(ctx, key, files, comment, altText(r))
		if err != nil && !isRefusal(err) {
			return classify(err)
		}
		if err != nil {
			a.log.Warn("slack: the reply's files could not be attached; its text goes out with a note", logkey.Thread, key.String(), logkey.Err, err)
			return a.postNoted(ctx, key, r, text, slackErrorCode(err), nil, record)
		}
		if err := record(filesPart(up)); err != nil {
			return err
		}
		uploaded = up
	}
	// The messages follow the files' step; without links the first part was the files' comment.
	if !withLinks && len(parts) > 0 {
		parts = parts[1:]
	}
	// A file Slack did not share is named in a message of its own right after the files.
	if note := missingNote(uploaded); note != "" {
		parts = append([][]string{{note}}, parts...)
	}
	return a.postParts(ctx, key, r, parts, 1, posted, sharedFiles(uploaded), record, plainStep)
}

// postNoted posts the reply's text and links without its files, which Slack refused (code is
// its answer), saying what is missing. Its first message is recorded as "note:ts code", so a
// retry knows the files are not coming and says the same.
func (a *Adapter) postNoted(ctx context.Context, key bot.ThreadKey, r bot.Reply, text, code string, posted []string, record bot.Record) error {
	note := ":warning: I could not attach the picture and the .excalidraw file"
	if code != "" {
		note += " (Slack said `" + code + "`)"
	}
	parts := messageParts(strings.TrimSpace(text+"\n\n"+note+"."), r.EditURL != "" || r.ViewURL != "")
	return a.postParts(ctx, key, r, parts, 0, posted, nil, record, func(i int, ts string) string {
		if i == 0 {
			return strings.TrimSpace("note:" + ts + " " + code)
		}
		return ts
	})
}

// plainStep records a message by its ts.
func plainStep(_ int, ts string) string { return ts }

// postParts posts the messages of parts in order, each a step of its own (the first is step
// first of the reply): those already in posted are skipped, each one posted is recorded as step
// names it. The last carries the link buttons.
func (a *Adapter) postParts(ctx context.Context, key bot.ThreadKey, r bot.Reply, parts [][]string, first int,
	posted []string, uploaded []slack.FileSummary, record bot.Record, step func(i int, ts string) string) error {
	for i, p := range parts {
		if len(posted) > first+i {
			continue // it went out already
		}
		download := ""
		last := i == len(parts)-1
		if last {
			download = a.downloadLink(ctx, uploaded)
		}
		ts, err := a.postReply(ctx, key, p, r, last, download)
		if err != nil {
			return classify(err)
		}
		if err := record(step(i, ts)); err != nil {
			return err
		}
	}
	return nil
}

// filesPart is the record of an upload step: the files' ids in the reply's order, "-" for one
// Slack did not share.
func filesPart(up []slack.FileSummary) string {
	ids := make([]string, len(up))
	for i, f := range up {
		ids[i] = f.ID
		if f.ID == "" {
			ids[i] = "-"
		}
	}
	return "files:" + strings.Join(ids, ",")
}

// uploadedFiles reads a recorded upload step back, the files' names from the reply; a file not
// shared has no ID.
func uploadedFiles(part string, files []bot.File) []slack.FileSummary {
	ids := strings.Split(strings.TrimPrefix(part, "files:"), ",")
	var out []slack.FileSummary
	for i, id := range ids {
		if id == "" || i >= len(files) {
			continue
		}
		if id == "-" {
			id = ""
		}
		out = append(out, slack.FileSummary{ID: id, Title: files[i].Name})
	}
	return out
}

// sharedFiles are the files of up that Slack shared.
func sharedFiles(up []slack.FileSummary) []slack.FileSummary {
	var out []slack.FileSummary
	for _, f := range up {
		if f.ID != "" {
			out = append(out, f)
		}
	}
	return out
}

// transientCodes are Slack API errors that may go away when the same call is made later.
var transientCodes = map[string]bool{"ratelimited": true, "internal_error": true, "fatal_error": true,
	"service_unavailable": true, "request_timeout": true}

// isRefusal reports whether err is Slack refusing the call for good (an API error code that
// trying again will not change: missing_scope, not_in_channel, channel_not_found …).
func isRefusal(err error) bool {
	code := slackErrorCode(err)
	return code != "" && !transientCodes[code]
}

// classify marks err for the outbox: a rate limit slack-go did not wait out carries Slack's
// Retry-After; a refusal is permanent; anything else (the network, a 5xx) may pass.
func classify(err error) error {
	var rl *slack.RateLimitedError
	switch {
	case errors.As(err, &rl):
		return bot.RateLimited(rl.RetryAfter, err)
	case isRefusal(err):
		return bot.Permanent(err)
	}
	return err
}

// postReply posts one message of a reply: its sections in Block Kit when the reply has links,
// the buttons after them when buttons is set; plain text otherwise. It returns the message's ts.
func (a *Adapter) postReply(ctx context.Context, key bot.ThreadKey, sections []string, r bot.Reply, buttons bool, download string) (string, error) {
	opts := []slack.MsgOption{slack.MsgOptionTS(key.Thread)}
	text := strings.Join(sections, "\n")
	if r.EditURL == "" && r.ViewURL == "" {
		opts = append(opts, slack.MsgOptionText(text, false))
	} else {
		fallback := text
		if fallback == "" {
			fallback = "Your diagram"
		}
		blocks, dropped := replyBlocks(sections, r, buttons, download)
		if len(dropped) > 0 {
			a.log.Warn("slack: links too long for a button were left out", logkey.Thread, key.String(), "buttons", dropped)
		}
		opts = append(opts, slack.MsgOptionText(truncate(fallback, maxSectionText), false), slack.MsgOptionBlocks(blocks...))
	}
	_, ts, err := a.api.PostMessageContext(ctx, key.Channel, opts...)
	if err != nil {
		return "", fmt.Errorf("slack post reply in %s: %w", key, err)
	}
	return ts, nil
}

// replyBlocks is a message's sections and, when withButtons is set, the link buttons (open in
// editor, view, download). A link longer than a button may hold is left out and named in
// dropped: Slack would refuse the whole message over it.
func replyBlocks(sections []string, r bot.Reply, withButtons bool, download string) (blocks []slack.Block, dropped []string) {
	for _, t := range sections {
		blocks = append(blocks, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, t, false, false), nil, nil))
	}
	if !withButtons {
		return blocks, nil
	}
	var buttons []slack.BlockElement
	button := func(id, label, link string, style slack.Style) {
		if link == "" {
			return
		}
		if len(link) > maxButtonURL {
			dropped = append(dropped, label)
			return
		}
		b := slack.NewButtonBlockElement(id, "", slack.NewTextBlockObject(slack.PlainTextType, label, false, false)).WithURL(link)
		if style != "" {
			b = b.WithStyle(style)
		}
		buttons = append(buttons, b)
	}
	button("open_editor", "Open in editor", r.EditURL, slack.StylePrimary)
	button("view", "View", r.ViewURL, "")
	button("download", "Download", download, "")
	if len(buttons) > 0 {
		blocks = append(blocks, slack.NewActionBlock("links", buttons...))
	}
	return blocks, dropped
}

// uploadFiles uploads each file and shares them all into the thread with one completion call.
// Pictures get alt as their alt text.
func (a *Adapter) uploadFiles(ctx context.Context, key bot.ThreadKey, files []bot.File, comment, alt string) ([]slack.FileSummary, error) {
	var done []slack.FileSummary
	for _, f := range files {
		if len(f.Content) == 0 {
			return nil, fmt.Errorf("slack upload %s: the file is empty", f.Name)
		}
		p := slack.GetUploadURLExternalParameters{FileName: f.Name, FileSize: len(f.Content)}
		if isPicture(f) {
			p.AltTxt = alt
		}
		u, err := a.api.GetUploadURLExternalContext(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("slack upload %s: files.getUploadURLExternal: %w", f.Name, err)
		}
		// slack-go cannot retry a streamed upload on 429, so the retry is ours.
		err = a.retryRateLimited(ctx, func() error {
			return a.api.UploadToURL(ctx, slack.UploadToURLParameters{
				UploadURL: u.UploadURL, Reader: bytes.NewReader(f.Content), Filename: f.Name,
			})
		})
		if err != nil {
			return nil, fmt.Errorf("slack upload %s: upload: %w", f.Name, err)
		}
		done = append(done, slack.FileSummary{ID: u.FileID, Title: f.Name})
	}
	res, err := a.api.CompleteUploadExternalContext(ctx, slack.CompleteUploadExternalParameters{
		Files: done, Channel: key.Channel, ThreadTimestamp: key.Thread, InitialComment: comment,
	})
	if err != nil {
		return nil, fmt.Errorf("slack upload: files.completeUploadExternal in %s: %w", key, err)
	}
	shared := map[string]bool{}
	for _, f := range res.Files {
		shared[f.ID] = true
	}
	// Slack may share fewer files than asked. Those it shared are in the thread with the comment:
	// they are returned (a missing one by its name only) and recorded, so a retry does not post
	// them again.
	out := make([]slack.FileSummary, len(done))
	n := 0
	for i, f := range done {
		out[i] = slack.FileSummary{Title: f.Title}
		if shared[f.ID] {
			out[i].ID = f.ID
			n++
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("slack upload: files.completeUploadExternal in %s shared none of %d files", key, len(done))
	}
	if n < len(done) {
		a.log.Warn("slack: Slack shared fewer of the reply's files than asked; the reply says which is missing",
			logkey.Thread, key.String(), "shared", n, "asked", len(done))
	}
	return out, nil
}

// missingNote says which of the reply's files Slack did not share; "" when none is missing.
func missingNote(up []slack.FileSummary) string {
	var names []string
	for _, f := range up {
		if f.ID == "" {
			names = append(names, "`"+f.Title+"`")
		}
	}
	if len(names) == 0 {
		return ""
	}
	return ":warning: Slack did not attach " + strings.Join(names, " and ") + "."
}

// maxAltText is Slack's limit on an image's alt text (files.getUploadURLExternal refuses more
// with alt_txt_too_large).
const maxAltText = 1000

// altText is the reply's description for its pictures, within Slack's limit. Without one the
// title says at least what the picture is.
func altText(r bot.Reply) string {
	alt := strings.TrimSpace(r.Alt)
	if alt == "" && strings.TrimSpace(r.Title) != "" {
		alt = "Diagram: " + strings.TrimSpace(r.Title)
	}
	return truncate(alt, maxAltText)
}

// isPicture reports whether f is an image a person would look at (the PNG, an SVG export).
func isPicture(f bot.File) bool {
	if strings.HasPrefix(f.MIME, "image/") {
		return true
	}
	switch strings.ToLower(path.Ext(f.Name)) {
	case ".png", ".svg", ".jpg", ".jpeg", ".webp", ".gif":
		return true
	}
	return false
}

// downloadLink is the link of the uploaded .excalidraw file (else the first file) for the
// Download button; empty when Slack does not tell it, and then the button is left out.
func (a *Adapter) downloadLink(ctx context.Context, files []slack.FileSummary) string {
	if len(files) == 0 {
		return ""
	}
	pick := files[0]
	for _, f := range files {
		if strings.HasSuffix(f.Title, ".excalidraw") {
			pick = f
			break
		}
	}
	info, _, _, err := a.api.GetFileInfoContext(ctx, pick.ID, 0, 0)
	if err != nil {
		a.log.Warn("slack: no download link for the reply", "file", pick.ID, logkey.Err, err)
		return ""
	}
	if info.URLPrivateDownload != "" {
		return info.URLPrivateDownload
	}
	return info.Permalink
}

// retryRateLimited runs call again after Slack's Retry-After while it is rate limited, up to
// Config.MaxRetries times.
func (a *Adapter) retryRateLimited(ctx context.Context, call func() error) error {
	for attempt := 0; ; attempt++ {
		err := call()
		var rl *slack.RateLimitedError
		if !errors.As(err, &rl) || attempt >= a.cfg.MaxRetries {
			return err
		}
		a.log.Info("slack: rate limited; waiting", "retry_after", rl.RetryAfter)
		t := time.NewTimer(max(rl.RetryAfter, time.Second))
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
	}
}

// isSlackError reports whether err is a Slack API error with one of the codes.
func isSlackError(err error, codes ...string) bool {
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) {
		return false
	}
	for _, c := range codes {
		if se.Err == c {
			return true
		}
	}
	return false
}

// slackErrorCode is the API error code in err ("missing_scope"), or "".
func slackErrorCode(err error) string {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	return ""
}

var (
	_ bot.SignedStatus = (*status)(nil)
	_ bot.SignClearer  = (*Adapter)(nil)
)
