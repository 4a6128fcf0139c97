package slack

import (
	"cmp"
	"context"
	"sync"
	"time"
)

const (
	// maxNames bounds the display names remembered; nameTTL is how long one is trusted (people
	// rename themselves).
	maxNames = 5000
	nameTTL  = time.Hour
	// nameTimeout bounds one users.info call: a slow answer costs a name, not the discussion.
	nameTimeout = 5 * time.Second
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

// name is user's display name (else real name, else handle), or user itself when Slack does not
// tell it. A look-up that is not in the cache costs one of *budget; with none left, the id is
// the name.
func (c *nameCache) name(ctx context.Context, a *Adapter, user string, budget *int) string {
	if user == "" {
		return ""
	}
	c.mu.Lock()
	if n, ok := c.names[user]; ok && time.Since(n.at) < c.ttl {
		c.mu.Unlock()
		return n.name
	}
	c.mu.Unlock()
	if *budget <= 0 {
		return user
	}
	*budget--

	ictx, cancel := context.WithTimeout(ctx, nameTimeout)
	u, err := a.api.GetUserInfoContext(ictx, user)
	cancel()
	if err != nil {
		a.log.Debug("slack: users.info failed; the author keeps their id"+scopeHint(err), "user", user, "err", err)
		if isRefusal(err) {
			c.put(user, user) // Slack's answer (user_not_found, missing_scope): ask again only later
		}
		return user
	}
	name := cmp.Or(u.Profile.DisplayName, u.Profile.RealName, u.RealName, u.Name, user)
	c.put(user, name)
	return name
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
