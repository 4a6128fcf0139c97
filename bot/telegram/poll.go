package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/excalibot/excalibot/internal/logkey"
)

// poll receives updates by long polling until ctx ends. getUpdates' offset is what tells Telegram
// an update arrived: it is moved past an update only once the core has kept it (or the adapter
// dropped it on purpose), so an update that could not be kept is fetched again, and then the ones
// after it, in order. (go-telegram/bot's own poller moves the offset as soon as an update is in
// its memory, which loses it in a crash.)
func (a *Adapter) poll(ctx context.Context) {
	var offset int64
	var wait time.Duration
	for ctx.Err() == nil {
		if wait > 0 {
			if a.sleep(ctx, wait) != nil {
				return
			}
		}
		updates, retry, err := a.getUpdates(ctx, offset)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			wait = max(retry, min(max(2*wait, 100*time.Millisecond), 5*time.Second))
			a.log.Warn("telegram: getUpdates failed; trying again", logkey.Err, err, "in", wait)
			continue
		}
		wait = 0
		for i := range updates {
			u := &updates[i]
			if err := a.handleUpdate(ctx, u); err != nil {
				if ctx.Err() != nil {
					return
				}
				// The offset stays: Telegram hands this update over again at the next poll.
				wait = time.Second
				a.log.Warn("telegram: update not kept; asking Telegram for it again", "update_id", u.ID, logkey.Err, err, "in", wait)
				break
			}
			offset = u.ID + 1
		}
	}
}

// apiAnswer is the Bot API's envelope of every answer.
type apiAnswer struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

// getUpdates asks for the updates from offset on, waiting up to PollTimeout for one. retry is the
// wait Telegram asked for with a 429.
func (a *Adapter) getUpdates(ctx context.Context, offset int64) ([]models.Update, time.Duration, error) {
	body, err := json.Marshal(map[string]any{
		"offset": offset, "timeout": int((a.cfg.PollTimeout - time.Second).Seconds()),
		"allowed_updates": []string{"message"},
	})
	if err != nil {
		return nil, 0, fmt.Errorf("getUpdates: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, a.cfg.PollTimeout+10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.cfg.APIURL+"/bot"+a.cfg.Token+"/getUpdates", bytes.NewReader(body))
	if err != nil {
		return nil, 0, fmt.Errorf("getUpdates: %w", redact(err))
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.pollc.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("getUpdates: %w", redact(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, 0, fmt.Errorf("getUpdates: read the answer: %w", redact(err))
	}
	var ans apiAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return nil, 0, fmt.Errorf("getUpdates: %s answered what is not the Bot API's JSON: %w", resp.Status, err)
	}
	if !ans.OK {
		return nil, time.Duration(ans.Parameters.RetryAfter) * time.Second,
			fmt.Errorf("getUpdates: %d %s", ans.ErrorCode, ans.Description)
	}
	var updates []models.Update
	if err := json.Unmarshal(ans.Result, &updates); err != nil {
		return nil, 0, fmt.Errorf("getUpdates: unreadable updates: %w", err)
	}
	return updates, 0, nil
}
