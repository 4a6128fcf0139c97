package bot

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/excalibot/excalibot/diagram/outline"
	"github.com/excalibot/excalibot/internal/clip"
	"github.com/excalibot/excalibot/internal/logkey"
	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/picture"
	"github.com/excalibot/excalibot/render/export"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store"
)

// errNoDiagram refuses a command about a diagram in a thread that has none.
var errNoDiagram = refuse(errors.New("no diagram in the thread"), "There is no diagram in this thread yet", "Describe one and I'll draw it.")

// command carries out everything but a drawing request, as a turn of its own: its reply (and the
// revision a revert makes) is committed with the turn's outcome.
func (b *Bot) command(ctx context.Context, t Turn) Outcome {
	r, save := b.commandReply(ctx, t.Key, t.jobs[0].cmd)
	state := store.RunDone
	if r.Error {
		state = store.RunFailed
	}
	return Outcome{State: state, Detail: clip.Runes(r.Text, 200), Reply: r, Save: save}
}

// commandReply carries out cmd and is its reply, with the revision to save with it, if any.
func (b *Bot) commandReply(ctx context.Context, key ThreadKey, cmd Command) (r Reply, save *store.SaveRequest) {
	if cmd.Err != nil {
		return Reply{Text: b.tell(key, "reading the command", cmd.Err), Error: true}, nil
	}
	if cmd.Kind == CmdHelp {
		return Reply{Text: HelpText}, nil
	}
	th, err := b.load(ctx, key)
	if err != nil {
		return Reply{Text: b.tell(key, "loading this thread's diagram", fromStore(err)), Error: true}, nil
	}
	if th.Rev == 0 && cmd.Kind != CmdTheme {
		return Reply{Text: b.tell(key, "carrying out the command", errNoDiagram)}, nil
	}
	// Every answer about a diagram names it, so a platform can say which one it answered about
	// (a Telegram group's plain /undo goes to the sender's last diagram).
	// A picture's reply has read its diagram's title already (its alt text comes from the same
	// outline).
	defer func() {
		if r.Title == "" && r.Alt == "" && cmd.Kind != CmdReset {
			r.Title = titleOf(th)
		}
	}()
	switch cmd.Kind {
	case CmdUndo, CmdRedo:
		move, word := b.store.Undo, "Undone"
		if cmd.Kind == CmdRedo {
			move, word = b.store.Redo, "Redone"
		}
		step := strings.ToLower(word[:4]) + "ing"
		moved, err := move(ctx, key, th.Rev)
		switch {
		case errors.Is(err, store.ErrNothingToUndo):
			return Reply{Text: b.tell(key, step, refuse(err, "There is nothing to undo: this is the oldest revision I kept", ""))}, nil
		case errors.Is(err, store.ErrNothingToRedo):
			return Reply{Text: b.tell(key, step, refuse(err, "There is nothing to redo", ""))}, nil
		case err != nil:
			return Reply{Text: b.tell(key, step, fromStore(err)), Error: true}, nil
		}
		return b.postReply(ctx, moved, movedText(cmd.Kind, th, moved)), nil
	case CmdReset:
		_, err := b.store.Save(ctx, store.SaveRequest{Key: key, Base: th.Rev, Scene: emptyScene, Author: store.AuthorReset, Reason: "reset", Memory: []byte{}})
		if err != nil {
			return Reply{Text: b.tell(key, "starting a new diagram", fromStore(err)), Error: true}, nil
		}
		if _, err := b.store.RevokeLinks(ctx, key, ""); err != nil {
			b.log.Warn("revoke links on reset", logkey.Thread, key.String(), logkey.Err, err)
		}
		return Reply{Text: "Started a new, empty diagram; the old editor links no longer work. Say undo to bring the previous diagram back."}, nil
	case CmdHistory:
		return b.history(ctx, th), nil
	case CmdShow:
		return b.show(ctx, th, cmd.Rev), nil
	case CmdRevert:
		return b.revert(ctx, th, cmd.Rev)
	case CmdDescribe:
		return b.describe(ctx, th, cmd.Rev), nil
	case CmdExport:
		return b.export(ctx, th, cmd.Arg), nil
	case CmdTheme:
		s := th.Settings
		s.Theme = cmd.Arg
		if err := b.store.SetSettings(ctx, key, s); err != nil {
			return Reply{Text: b.tell(key, "changing the theme", fromStore(err)), Error: true}, nil
		}
		text := fmt.Sprintf("Pictures in this thread are now %s.", cmd.Arg)
		if th.Rev == 0 {
			return Reply{Text: text}, nil
		}
		th.Settings = s
		return b.postReply(ctx, th, text), nil
	}
	return Reply{Text: HelpText}, nil
}

// export is the reply that sends th's diagram as a file of format; a picture (PNG, SVG) carries
// the diagram's alt text as every picture does.
func (b *Bot) export(ctx context.Context, th *store.Thread, format string) Reply {
	r := Reply{Text: fmt.Sprintf("Revision %d as %s.", th.Rev, format)}
	// A stored scene that cannot be read is still sent as its file, under the name it can get.
	sc, err := storedScene(th)
	if err == nil && sc != nil {
		o := outline.Of(sc)
		r.Title = o.Title
		if format != "excalidraw" {
			r.Alt = altText(o)
		}
	}
	base := outline.FileBase(r.Title, th.Rev)
	switch format {
	case "excalidraw":
		r.Files = []File{sceneFile(base, th.Scene)}
	case "png", "svg":
		if err == nil && sc != nil && sc.Len() == 0 { // the renderer refuses an empty scene
			r.Text = fmt.Sprintf("Revision %d is empty: there is nothing to export as %s yet.", th.Rev, format)
			r.Files = []File{sceneFile(base, th.Scene)}
			return r
		}
		var pic []byte
		if err == nil {
			pic, err = b.render.Render(ctx, sc, th.Scene, export.Format(format), th.Settings.Theme == "dark")
		}
		if err != nil {
			return Reply{Text: b.tell(th.Key, "rendering the "+format, err), Error: true, Files: []File{sceneFile(base, th.Scene)}}
		}
		mime := "image/png"
		if format == "svg" {
			mime = "image/svg+xml"
		}
		r.Files = []File{{Name: base + "." + format, MIME: mime, Content: pic}}
	}
	return r
}

// upload is what an attachment turned out to be: a diagram to import (doc) or a picture to redraw.
type upload struct {
	doc     []byte
	picture *Image
}

// readUpload reads the first attachment: a .excalidraw (JSON) file or a PNG with a scene
// embedded is imported; any other picture (a photo of a whiteboard, a screenshot) is checked,
// scaled and handed to the model to redraw. What a file is, is told by its bytes, not its name.
// A file it refuses is a refusal that says why.
func (b *Bot) readUpload(ctx context.Context, files []Attachment) (upload, error) {
	f := files[0]
	ext := strings.ToLower(path.Ext(f.Name))
	isImage := strings.HasPrefix(f.MIME, "image/") || ext == ".png" || ext == ".jpg" || ext == ".jpeg" || ext == ".webp"
	if !isImage {
		doc, err := b.importFile(ctx, f)
		return upload{doc: doc}, err
	}
	max := max(b.opt.MaxImportBytes, b.opt.MaxImageBytes)
	if f.Size > max {
		return upload{}, cannotImport(fmt.Errorf("picture %s: %d bytes declared, over %d", f.Name, f.Size, max),
			"%s is %s; I take pictures up to %s", f.Called(), scene.ByteSize(f.Size), scene.ByteSize(max))
	}
	data, err := f.Fetch(ctx, max)
	if err != nil {
		return upload{}, notDownloaded(f.Called(), err)
	}
	if picture.HasScene(data) {
		doc, err := b.importData(f.Name, data)
		return upload{doc: doc}, err
	}
	pic, err := picture.Prepare(data, picture.Limits{MaxBytes: b.opt.MaxImageBytes, LongSide: b.opt.ImageSide})
	if err != nil {
		err = fmt.Errorf("read picture %s: %w", f.Name, err)
		if msg := userMessage(err); msg != "" {
			return upload{}, cannotImport(err, "%s: %s", f.Called(), msg)
		}
		return upload{}, err
	}
	return upload{picture: &Image{Data: pic.Data, Width: pic.Width, Height: pic.Height}}, nil
}

// cannotImport is the refusal of an attached file: msg (formatted) says why.
func cannotImport(err error, format string, args ...any) error {
	return refuse(err, fmt.Sprintf(format, args...), "Nothing in the diagram changed.")
}

// notDownloaded is the refusal of a file the adapter could not download, with the adapter's words
// for why when it has some.
func notDownloaded(name string, err error) error {
	err = fmt.Errorf("download %s: %w", name, err)
	if msg := userMessage(err); msg != "" {
		return cannotImport(err, "I could not download %s (%s)", name, msg)
	}
	return cannotImport(err, "I could not download %s", name)
}

// importFile reads a .excalidraw (JSON) file. The scene is checked and normalised by the scene
// package, so what is saved is a valid document whatever was uploaded.
func (b *Bot) importFile(ctx context.Context, f Attachment) ([]byte, error) {
	ext := strings.ToLower(path.Ext(f.Name))
	if ext != ".excalidraw" && ext != ".json" && !strings.Contains(f.MIME, "json") {
		return nil, cannotImport(fmt.Errorf("import %s: not a .excalidraw file, an Excalidraw PNG or a picture", f.Name),
			"I can import a .excalidraw file, a PNG exported from Excalidraw with the scene embedded, or redraw a picture (PNG, JPEG, WebP); %q is none of these", f.Name)
	}
	if f.Size > b.opt.MaxImportBytes {
		return nil, cannotImport(fmt.Errorf("import %s: %d bytes declared, over %d", f.Name, f.Size, b.opt.MaxImportBytes),
			"%s is %s; I import files up to %s", f.Name, scene.ByteSize(f.Size), scene.ByteSize(b.opt.MaxImportBytes))
	}
	data, err := f.Fetch(ctx, b.opt.MaxImportBytes)
	if err != nil {
		return nil, notDownloaded(f.Name, err)
	}
	return b.importData(f.Name, data)
}

// importData opens a downloaded .excalidraw file or Excalidraw PNG as a scene to save.
func (b *Bot) importData(name string, data []byte) ([]byte, error) {
	if int64(len(data)) > b.opt.MaxImportBytes { // the declared size may be missing or wrong
		return nil, cannotImport(fmt.Errorf("import %s: over %d bytes", name, b.opt.MaxImportBytes),
			"%s is more than %s; I import files up to %s", name, scene.ByteSize(b.opt.MaxImportBytes), scene.ByteSize(b.opt.MaxImportBytes))
	}
	if scene.IsPNG(data) {
		var err error
		data, err = scene.EmbeddedScene(data, b.opt.MaxSceneBytes)
		switch {
		case errors.Is(err, scene.ErrNoEmbeddedScene):
			return nil, cannotImport(fmt.Errorf("import %s: %w", name, err),
				"%s: the PNG has no Excalidraw scene embedded (export it from Excalidraw with \"Embed scene\" on)", name)
		case errors.Is(err, scene.ErrEmbeddedTooLarge):
			return nil, cannotImport(fmt.Errorf("import %s: %w", name, err),
				"%s: the scene embedded in this PNG is more than %s; I keep scenes up to %s", name,
				scene.ByteSize(int64(b.opt.MaxSceneBytes)), scene.ByteSize(int64(b.opt.MaxSceneBytes)))
		case err != nil:
			return nil, cannotImport(fmt.Errorf("import %s: %w", name, err),
				"%s: the scene embedded in this PNG cannot be read; export it from Excalidraw again", name)
		}
	}
	if len(data) > b.opt.MaxSceneBytes {
		return nil, cannotImport(fmt.Errorf("import %s: scene of %d bytes, over %d", name, len(data), b.opt.MaxSceneBytes),
			"the scene in %s is %s; I keep scenes up to %s", name, scene.ByteSize(int64(len(data))), scene.ByteSize(int64(b.opt.MaxSceneBytes)))
	}
	// The caps are checked on the bytes, before decoding builds anything.
	if err := b.checkImport(name, data); err != nil {
		return nil, err
	}
	sc, err := scene.Decode(data)
	if err != nil {
		return nil, cannotImport(fmt.Errorf("import %s: %w", name, err),
			"%s is not a diagram I can open; save it from Excalidraw again and send it", name)
	}
	doc, err := sc.Encode()
	if err != nil {
		return nil, fmt.Errorf("import %s: encode: %w", name, err)
	}
	return doc, nil
}

// checkImport refuses a document the agent could not work on, from its bytes: more elements than
// its limit, or a text longer than any label it writes. Deleted elements do not count (they are
// not drawn), but at most as many again are taken.
func (b *Bot) checkImport(name string, data []byte) error {
	err := scene.Limits{MaxBytes: b.opt.MaxSceneBytes, MaxElements: b.opt.MaxElements, MaxTextLength: b.opt.MaxTextLength}.Check(data)
	var over *scene.OverCapError
	if !errors.As(err, &over) {
		return nil // not JSON, or no scene: Decode says what is wrong
	}
	err = fmt.Errorf("import %s: %w", name, err)
	switch over.Cap {
	case scene.CapText:
		return cannotImport(err, "%s: the text of element %q is %s long; I take texts of up to %s. Shorten it and send the file again",
			name, over.ID, plural.Count(over.Got, "character", ""), plural.Count(over.Max, "character", ""))
	case scene.CapElements:
		return cannotImport(err, "%s: the diagram has %s; I work on diagrams of up to %s. Split it, or remove some elements, and send it again",
			name, plural.Count(over.Got, "element", ""), plural.Count(over.Max, "element", ""))
	case scene.CapDeleted:
		return cannotImport(err, "%s: the file keeps %d deleted elements; I take up to %d. Open it in Excalidraw and save it again (that drops them), then send it",
			name, over.Got, over.Max)
	}
	return cannotImport(err, "%s: the scene is %s; I keep scenes up to %s", name, scene.ByteSize(int64(over.Got)), scene.ByteSize(int64(over.Max)))
}

// movedText says what an undo or redo did: which change it took back or made again, in the
// words history uses, and the revision the diagram is at now ("Undid the last change (added 1
// box): back to revision 2.").
func movedText(kind CommandKind, from, to *store.Thread) string {
	before, after := from, to // an undo takes back what from added over to
	if kind == CmdUndo {
		before, after = to, from
	}
	var change string
	if b, err := storedScene(before); err == nil {
		if a, err := storedScene(after); err == nil && a != nil {
			change = Changes(b, a)
		}
	}
	switch {
	case kind == CmdUndo && change != "":
		return fmt.Sprintf("Undid the last change (%s): back to revision %d.", change, to.Rev)
	case kind == CmdUndo:
		return fmt.Sprintf("Undone: back to revision %d.", to.Rev)
	case change != "":
		return fmt.Sprintf("Redid the change (%s): now at revision %d.", change, to.Rev)
	}
	return fmt.Sprintf("Redone: now at revision %d.", to.Rev)
}
