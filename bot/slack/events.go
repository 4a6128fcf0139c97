package slack

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/excalibot/excalibot/internal/logkey"
)

// maxEventBody bounds a request body; Slack's event payloads are a few kilobytes.
const maxEventBody = 1 << 20

// EventsHandler serves the Events API (mounted at /slack/events). It checks each request's
// signature on the raw body with the signing secret (timestamps more than 5 minutes off are
// refused: replays), answers url_verification, and answers a message event with 200 once the core
// has kept it (one commit, well within Slack's 3 seconds), or 503 when it could not, so that
// Slack delivers it again. A forged or stale request gets 401 and nothing is processed.
func (a *Adapter) EventsHandler() http.Handler {
	return http.HandlerFunc(a.serveEvents)
}

func (a *Adapter) serveEvents(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxEventBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "cannot read the request body", http.StatusBadRequest)
		return
	}
	if a.cfg.SigningSecret == "" {
		// Without a secret every request would be unverifiable; refuse rather than trust.
		a.log.Error("slack events: no signing secret configured (SLACK_SIGNING_SECRET)")
		http.Error(w, "not configured", http.StatusServiceUnavailable)
		return
	}
	sv, err := slack.NewSecretsVerifier(r.Header, a.cfg.SigningSecret)
	if err == nil {
		_, _ = sv.Write(body)
		err = sv.Ensure()
	}
	if err != nil {
		a.log.Warn("slack events: request refused", logkey.Err, err, "remote", r.RemoteAddr)
		http.Error(w, "invalid signature", http.StatusUnauthorized)
		return
	}

	ev, err := slackevents.ParseEvent(json.RawMessage(body), slackevents.OptionNoVerifyToken())
	if err != nil {
		a.log.Warn("slack events: cannot parse a signed request", logkey.Err, err)
		http.Error(w, "cannot parse the event", http.StatusBadRequest)
		return
	}
	switch ev.Type {
	case slackevents.URLVerification:
		uv, ok := ev.Data.(*slackevents.EventsAPIURLVerificationEvent)
		if !ok {
			http.Error(w, "bad url_verification", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, uv.Challenge)
		return
	case slackevents.AppRateLimited:
		a.log.Warn("slack events: Slack is rate limiting this app's events")
		w.WriteHeader(http.StatusOK)
		return
	case slackevents.CallbackEvent:
	default:
		w.WriteHeader(http.StatusOK)
		return
	}

	retry, _ := strconv.Atoi(r.Header.Get("X-Slack-Retry-Num"))
	if retry > 0 {
		// A redelivery (Slack got no 2xx in time, or we answered 503): same event id, which the
		// core recognises; it is still handed over in case the first delivery never arrived.
		a.log.Info("slack redelivered an event", "attempt", retry, "reason", r.Header.Get("X-Slack-Retry-Reason"))
	}
	in, ok := parseEventsAPI(ev)
	if !ok {
		w.WriteHeader(http.StatusOK) // an event we do not subscribe to for work
		return
	}
	in.retry = retry
	if _, ok := a.identity(); !ok {
		// Run has not learned who the bot is yet: Slack retries a 5xx, so the message is
		// delayed rather than lost.
		a.log.Warn("slack events: not ready; asking Slack to retry", "event", in.eventID)
		http.Error(w, "not ready, retry later", http.StatusServiceUnavailable)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), acceptTimeout)
	defer cancel()
	if err := a.accept(ctx, in); err != nil {
		a.log.Warn("slack events: event not kept; asking Slack to retry", "event", in.eventID, logkey.Err, err)
		http.Error(w, "not kept, retry later", http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// acceptTimeout bounds keeping one event, within Slack's 3 seconds for an answer.
const acceptTimeout = 2500 * time.Millisecond
