package web

import (
	"context"
	"errors"
	"strings"

	"github.com/excalibot/excalibot/store"
)

// resolve finds the link of a token, with one error for every way a token can be wrong.
func (s *Server) resolve(ctx context.Context, token string) (store.Link, error) {
	if len(token) < 20 || len(token) > 128 || strings.ContainsAny(token, "./") {
		return store.Link{}, errNotFound
	}
	l, err := s.st.ResolveLink(ctx, token)
	switch {
	case err == nil:
		return l, nil
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrLinkExpired), errors.Is(err, store.ErrLinkRevoked):
		return store.Link{}, errNotFound
	default:
		return store.Link{}, err
	}
}
