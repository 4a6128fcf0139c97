package links

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/excalibot/excalibot/store"
)

// Share gives chat replies excalidraw.com #json= links instead of this server's editor
// links (EXCALIBOT_SHARE_LINKS, used only without EXCALIBOT_PUBLIC_URL): people in a chat cannot
// reach an editor on the bot's own machine, but they can open excalidraw.com. The scene is
// uploaded to excalidraw.com's store encrypted; the key travels only in the link's fragment. Edits
// made there stay there: send the downloaded file back to the thread to continue from them.
type Share struct {
	Linker ShareLinker

	mu   sync.Mutex
	made map[string]string // "thread@rev" → link: a revision posted again (export, undo) reuses its upload
}

// maxSharedRevisions bounds the remembered links; a forgotten revision is simply uploaded again.
const maxSharedRevisions = 10_000

// ThreadLinks uploads the thread's current revision (once per revision) and returns its link as
// the edit link; there is no view-only kind.
func (s *Share) ThreadLinks(ctx context.Context, th *store.Thread) (edit, view string, err error) {
	if th.Scene == nil {
		return "", "", errors.New("the thread has no diagram to share yet")
	}
	id := fmt.Sprintf("%s@%d", th.Key, th.Rev)
	s.mu.Lock()
	link, ok := s.made[id]
	s.mu.Unlock()
	if ok {
		return link, "", nil
	}
	link, err = s.Linker.Link(ctx, th.Scene)
	if err != nil {
		return "", "", fmt.Errorf("excalidraw.com link: %w", err)
	}
	s.mu.Lock()
	if s.made == nil || len(s.made) >= maxSharedRevisions {
		s.made = map[string]string{}
	}
	s.made[id] = link
	s.mu.Unlock()
	// An excalidraw.com link opens an editable copy; there is no view-only kind.
	return link, "", nil
}
