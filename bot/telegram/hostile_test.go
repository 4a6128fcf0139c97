package telegram

import (
	"math"
	"testing"

	"github.com/go-telegram/bot/models"
)

// TestMalformedEntities: entity offsets and lengths come from the update as they are. Negative
// lengths and sums that overflow int used to slice out of range and panic handleUpdate (found
// by FuzzWebhook); in polling mode nothing recovers that panic, so one update stopped the bot.
func TestMalformedEntities(t *testing.T) {
	me := &models.User{ID: 42, IsBot: true, Username: "draw_bot"}
	text := "@draw_bot draw"
	for _, tc := range []struct {
		name string
		e    models.MessageEntity
		want string // stripMention's result
	}{
		{"well formed", models.MessageEntity{Type: models.MessageEntityTypeMention, Offset: 0, Length: 9}, "draw"},
		{"negative length", models.MessageEntity{Type: models.MessageEntityTypeTextMention, Offset: 0, Length: -5, User: me}, text},
		{"length overflows", models.MessageEntity{Type: models.MessageEntityTypeMention, Offset: 1, Length: math.MaxInt}, text},
		{"offset past the end", models.MessageEntity{Type: models.MessageEntityTypeMention, Offset: 99, Length: 1}, text},
		{"negative offset", models.MessageEntity{Type: models.MessageEntityTypeMention, Offset: -1, Length: 3}, text},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := stripMention(text, []models.MessageEntity{tc.e}, me); got != tc.want {
				t.Errorf("stripMention = %q, want %q", got, tc.want)
			}
			_ = entityText(text, tc.e) // must not panic
		})
	}
}
