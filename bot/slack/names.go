package slack

import (
	"cmp"
	"context"
	"sync"
	"time"

	"github.com/excalibot/excalibot/internal/logkey"
)

const (
	// maxNames bounds the display names remembered; nameTTL is how long one is trusted (people
	// rename themselves).
	maxNames = 5000
	nameTTL  = time.Hour
	// nameBudget bounds all the users.info calls of one discussion, nameWorkers of them at a
	// time: a slow Slack costs names, not the discussion.
	nameBudget  = 5 * time.Second
	nameWorkers = 4
	// maxNameLookups bounds the users.info calls of one discussion; names beyond it that are
	// not cached stay user ids.
	maxNameLookups = 50
)

// nameCache remembers people's display names from users.info, at most max of them for ttl each.
// A look-up Slack refused is remembered too (as the user id), so a thread full of one unknown
// author costs one call.
type nameCache struct {
	max int
	ttl time.Duration

	mu    sync.Mutex
	names map[string]cachedName
	order []string // insertion order, for eviction
}

type cachedName struct {
	name string
	at   time.Time
}

func newNameCache(max int, ttl time.Duration) *nameCache {
	return &nameCache{max: max, ttl: ttl, names: map[string]cachedName{}}
}

// cached is user's remembered name.
func (c *nameCache) cached(user string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.names[user]
	if !ok || time.Since(n.at) >= c.ttl {
		return "", false
	}
	return n.name, true
}

// resolve names users (in the order given, the most wanted first): each one's display name
// (else real name, else handle) from the cache or users.info, or the user id itself when Slack
// does not tell it. The look-ups, at most maxNameLookups of them, run nameWorkers at a time
// within ctx: those still waiting or under way when it ends leave their users named by id.
func (c *nameCache) resolve(ctx context.Context, a *Adapter, users []string) map[string]string {
	out := map[string]string{}
	var ask []string
	for _, u := range users {
		if _, done := out[u]; done || u == "" {
			continue
		}
		out[u] = u
		if n, ok := c.cached(u); ok {
			out[u] = n
		} else if len(ask) < maxNameLookups {
			ask = append(ask, u)
		}
	}
	if len(ask) == 0 {
		return out
	}
	var mu sync.Mutex
	work := make(chan string)
	var wg sync.WaitGroup
	for range min(nameWorkers, len(ask)) {
		wg.Go(func() {
			for u := range work {
				if n, ok := c.lookUp(ctx, a, u); ok {
					mu.Lock()
					out[u] = n
					mu.Unlock()
				}
			}
		})
	}
	asked := 0
feed:
	for _, u := range ask {
		select {
		case work <- u:
			asked++
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		missed := 0
		for _, u := range ask {
			if _, ok := c.cached(u); !ok {
				missed++
			}
		}
		if missed > 0 {
			a.log.Info("slack: not every name came in time; those people keep their user ids",
				"lookups", len(ask), "asked", asked, "missed", missed, logkey.Err, err)
		}
	}
	return out
}

// lookUp asks users.info for user's name; false when Slack did not answer with one. A refusal
// (user_not_found, missing_scope) is remembered as the id itself, so that it is asked again only
// later; a failure of the moment (a timeout, the budget spent) is not.
func (c *nameCache) lookUp(ctx context.Context, a *Adapter, user string) (string, bool) {
	if ctx.Err() != nil {
		return "", false
	}
	u, err := a.api.GetUserInfoContext(ctx, user)
	if err != nil {
		a.log.Debug("slack: users.info failed; the author keeps their id"+scopeHint(err), "user", user, logkey.Err, err)
		if isRefusal(err) {
			c.put(user, user)
		}
		return "", false
	}
	name := cmp.Or(u.Profile.DisplayName, u.Profile.RealName, u.RealName, u.Name, user)
	c.put(user, name)
	return name, true
}

func (c *nameCache) put(user, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.names[user]; !ok {
		c.order = append(c.order, user)
	}
	c.names[user] = cachedName{name: name, at: time.Now()}
	for len(c.order) > c.max {
		delete(c.names, c.order[0])
		c.order = c.order[1:]
	}
}

// size is how many names are remembered.
func (c *nameCache) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.names)
}
