package bot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/excalibot/excalibot/diagram/outline"
	"github.com/excalibot/excalibot/internal/clip"
	"github.com/excalibot/excalibot/internal/logkey"
	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store"
)

// The commands that browse a thread's revisions: history, show, revert and describe. Their
// revision numbers are the store's, so every reply and the history name a revision alike.

// history is the reply to history: the newest kept revisions, each with who made it and what it
// changed from the revision it was made on.
func (b *Bot) history(ctx context.Context, th *store.Thread) Reply {
	revs, err := b.store.History(ctx, th.Key, 0)
	if err != nil {
		return Reply{Text: b.tell(th.Key, "reading the history", fromStore(err)), Error: true}
	}
	kept := len(revs)
	if n := b.opt.HistoryListed; n > 0 && len(revs) > n {
		revs = revs[:n]
	}
	rs := b.revScenes(th.Key)
	entries := make([]historyEntry, len(revs))
	for i, r := range revs {
		entries[i].Revision = r
		entries[i].change, entries[i].known = rs.change(ctx, r)
	}
	return Reply{Text: historyText(entries, kept, b.opt.Now())}
}

// historyEntry is one line of the history: a revision and what it changed.
type historyEntry struct {
	store.Revision
	change string
	known  bool // change was computed (both scenes are kept and readable)
}

func historyText(entries []historyEntry, kept int, now time.Time) string {
	var sb strings.Builder
	sb.WriteString("Revisions, newest first")
	if kept > len(entries) {
		fmt.Fprintf(&sb, " (the %d newest of the %d I keep)", len(entries), kept)
	}
	sb.WriteString(":\n")
	for _, e := range entries {
		mark := ""
		if e.Current {
			mark = " ← current"
		}
		fmt.Fprintf(&sb, "%d. %s (%s)%s\n", e.Rev, revisionLine(e.Revision, e.change, e.known), ago(now.Sub(e.Created)), mark)
	}
	sb.WriteString("Say show N to see revision N, revert N to make it the current diagram again; undo and redo step through them.")
	return sb.String()
}

// revisionLine says who made r and what it did: `model: “add a cache” — added 1 box, 1 arrow`.
func revisionLine(r store.Revision, change string, known bool) string {
	var what []string
	if n := note(r); n != "" {
		what = append(what, n)
	}
	switch {
	case change != "":
		what = append(what, change)
	case known:
		what = append(what, "no visible change")
	}
	if len(what) == 0 {
		return who(r)
	}
	return who(r) + ": " + strings.Join(what, " — ")
}

// who names the author of a revision as people say it.
func who(r store.Revision) string {
	switch r.Author {
	case store.AuthorAgent:
		if isMermaid(r.Reason) {
			return "Mermaid"
		}
		return "model"
	case store.AuthorEditor:
		return "editor"
	case store.AuthorImport:
		return "import"
	case store.AuthorRevert:
		return "revert"
	case store.AuthorReset, store.AuthorRestore:
		return "reset"
	case "":
		return "unknown"
	}
	return string(r.Author)
}

// note is the stored reason as a history line shows it (the request quoted, the file imported,
// the revision reverted to), or "" when it says no more than who made the revision.
func note(r store.Revision) string {
	reason := strings.Join(strings.Fields(r.Reason), " ")
	switch r.Author {
	case store.AuthorAgent:
		if reason == "" || isMermaid(r.Reason) { // the Mermaid source says nothing in one line
			return ""
		}
		return "“" + clip.Runes(reason, 60) + "”"
	case store.AuthorEditor:
		if reason == "edited in the browser" {
			return ""
		}
	case store.AuthorImport:
		reason = strings.TrimPrefix(reason, "imported ")
	case store.AuthorRevert:
		reason = strings.TrimPrefix(reason, "reverted ")
	case store.AuthorReset, store.AuthorRestore:
		if reason == "reset" {
			return ""
		}
	}
	return clip.Runes(reason, 60)
}

func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return plural.Count(int(d/time.Minute), "minute", "") + " ago"
	case d < 48*time.Hour:
		return plural.Count(int(d/time.Hour), "hour", "") + " ago"
	}
	return plural.Count(int(d/(24*time.Hour)), "day", "") + " ago"
}

// revScenes loads and decodes revisions' scenes once each, for the changes between them.
type revScenes struct {
	b   *Bot
	key ThreadKey
	got map[int64]*scene.Scene // nil for a revision not kept or not readable
}

func (b *Bot) revScenes(key ThreadKey) *revScenes {
	return &revScenes{b: b, key: key, got: map[int64]*scene.Scene{}}
}

func (s *revScenes) get(ctx context.Context, rev int64) *scene.Scene {
	if sc, ok := s.got[rev]; ok {
		return sc
	}
	var sc *scene.Scene
	r, err := s.b.store.Revision(ctx, s.key, rev)
	switch {
	case err == nil:
		sc, err = scene.Decode(r.Scene)
		if err != nil {
			s.b.log.Warn("a kept revision cannot be read", logkey.Thread, s.key.String(), "rev", rev, logkey.Err, err)
		}
	case !errors.Is(err, store.ErrNotFound):
		s.b.log.Warn("read a revision for the history", logkey.Thread, s.key.String(), "rev", rev, logkey.Err, err)
	}
	s.got[rev] = sc
	return sc
}

// change is what r changed from its parent; known is false when either is not kept or readable.
func (s *revScenes) change(ctx context.Context, r store.Revision) (string, bool) {
	after := s.get(ctx, r.Rev)
	if after == nil {
		return "", false
	}
	var before *scene.Scene // the first revision is made on nothing
	if r.Parent > 0 {
		if before = s.get(ctx, r.Parent); before == nil {
			return "", false
		}
	}
	return Changes(before, after), true
}

// revisionOf loads revision n of th, or is the reply that says why there is none.
func (b *Bot) revisionOf(ctx context.Context, th *store.Thread, n int64) (*store.Revision, *Reply) {
	step := fmt.Sprintf("reading revision %d", n)
	if n > th.Head {
		err := refuse(fmt.Errorf("revision %d: past the head, %d", n, th.Head),
			fmt.Sprintf("There is no revision %d: the newest is revision %d", n, th.Head), "Say history to see them.")
		return nil, &Reply{Error: true, Text: b.tell(th.Key, step, err)}
	}
	r, err := b.store.Revision(ctx, th.Key, n)
	if errors.Is(err, store.ErrNotFound) {
		msg := fmt.Sprintf("Revision %d is no longer kept", n)
		if revs, herr := b.store.History(ctx, th.Key, 0); herr == nil && len(revs) > 0 {
			msg = fmt.Sprintf("Revision %d is no longer kept: I keep the last %s, and the oldest now is revision %d",
				n, plural.Count(len(revs), "revision", ""), revs[len(revs)-1].Rev)
		}
		return nil, &Reply{Error: true, Text: b.tell(th.Key, step, refuse(err, msg, "Say history to see them."))}
	}
	if err != nil {
		return nil, &Reply{Error: true, Text: b.tell(th.Key, step, fromStore(err))}
	}
	return r, nil
}

// show posts revision n's picture and file (the current one for 0) and changes nothing.
func (b *Bot) show(ctx context.Context, th *store.Thread, n int64) Reply {
	if n == 0 {
		n = th.Rev
	}
	r, fail := b.revisionOf(ctx, th, n)
	if fail != nil {
		return *fail
	}
	change, known := b.revScenes(th.Key).change(ctx, *r)
	line := revisionLine(*r, change, known)
	if r.Rev == th.Rev {
		return b.postReply(ctx, th, fmt.Sprintf("Revision %d, the current diagram (%s).", r.Rev, line))
	}
	view := *th
	view.Rev, view.Scene = r.Rev, r.Scene
	rep := b.postReply(ctx, &view, fmt.Sprintf("Revision %d (%s), as it was; nothing changed. The current diagram is revision %d; say revert %d to continue from this one.",
		r.Rev, line, th.Rev, r.Rev))
	// The editor links open the thread's current diagram, not this one, and the thread keeps the
	// current diagram's title.
	rep.EditURL, rep.ViewURL, rep.Title = "", "", titleOf(th)
	return rep
}

// revert makes revision n the current diagram again as a new revision, saved with the run's end
// (so its picture is posted only once it is durable), the agent's memory kept.
func (b *Bot) revert(ctx context.Context, th *store.Thread, n int64) (Reply, *store.SaveRequest) {
	if n == th.Rev {
		return Reply{Text: fmt.Sprintf("Revision %d is the current diagram already; nothing changed.", n)}, nil
	}
	r, fail := b.revisionOf(ctx, th, n)
	if fail != nil {
		return *fail, nil
	}
	if bytes.Equal(r.Scene, th.Scene) {
		return Reply{Text: fmt.Sprintf("Revision %d is the same as the current diagram (revision %d); nothing changed.", n, th.Rev)}, nil
	}
	old, err := scene.Decode(r.Scene)
	if err != nil {
		err = refuse(fmt.Errorf("decode revision %d: %w", n, err),
			fmt.Sprintf("Revision %d cannot be read, so I did not revert to it", n), "Nothing in the diagram changed.")
		return Reply{Error: true, Text: b.tell(th.Key, fmt.Sprintf("reverting to revision %d", n), err)}, nil
	}
	next := predicted(th, r.Scene, th.Memory)
	text := fmt.Sprintf("Reverted to revision %d: the diagram is now revision %d", n, next.Rev)
	if cur, err := storedScene(th); err == nil {
		if c := Changes(cur, old); c != "" {
			text += " (" + c + ")"
		}
	}
	text += fmt.Sprintf(". Say undo to go back to revision %d.", th.Rev)
	save := &store.SaveRequest{Key: th.Key, Base: th.Rev, Scene: r.Scene, Author: store.AuthorRevert,
		Reason: fmt.Sprintf("reverted to revision %d", n)}
	return b.pictureReply(ctx, next, old, text), save
}

// describe answers with the diagram as a text outline (revision n, or the current one for 0):
// for those who cannot see the picture, and for pasting into documents.
func (b *Bot) describe(ctx context.Context, th *store.Thread, n int64) Reply {
	doc, rev := th.Scene, th.Rev
	if n != 0 && n != th.Rev {
		r, fail := b.revisionOf(ctx, th, n)
		if fail != nil {
			return *fail
		}
		doc, rev = r.Scene, r.Rev
	}
	sc, err := scene.Decode(doc)
	if err != nil {
		err = refuse(fmt.Errorf("decode revision %d: %w", rev, err), fmt.Sprintf("Revision %d cannot be read; say reset to start over", rev), "")
		return Reply{Error: true, Text: b.tell(th.Key, fmt.Sprintf("describing revision %d", rev), err)}
	}
	if sc.Len() == 0 {
		return Reply{Text: fmt.Sprintf("Revision %d is empty: there is nothing to describe. Describe a diagram and I'll draw it.", rev)}
	}
	text := outline.Of(sc).Text()
	if rev != th.Rev {
		text = fmt.Sprintf("Revision %d (the current diagram is revision %d):\n\n%s", rev, th.Rev, text)
	}
	return Reply{Text: text}
}
