package slackfake

import (
	"encoding/json"
	"unicode/utf8"
)

// checkBlocks applies Block Kit's limits that a reply can run into (docs.slack.dev/reference/block-kit):
// at most 50 blocks, section text up to 3 000 characters, up to 25 elements in an actions block,
// button labels up to 75 characters and URLs up to 3 000. Slack answers "invalid_blocks" to the
// whole message when one is broken.
func checkBlocks(raw string) string {
	if raw == "" {
		return ""
	}
	var blocks []struct {
		Type string `json:"type"`
		Text *struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"text"`
		Elements []struct {
			Type string `json:"type"`
			URL  string `json:"url"`
			Text *struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"text"`
		} `json:"elements"`
	}
	if err := json.Unmarshal([]byte(raw), &blocks); err != nil || len(blocks) > 50 {
		return "invalid_blocks"
	}
	for _, b := range blocks {
		switch b.Type {
		case "section":
			if b.Text == nil || b.Text.Text == "" || utf8.RuneCountInString(b.Text.Text) > 3000 {
				return "invalid_blocks"
			}
		case "actions":
			if len(b.Elements) == 0 || len(b.Elements) > 25 {
				return "invalid_blocks"
			}
			for _, e := range b.Elements {
				if e.Type != "button" {
					continue
				}
				if e.Text == nil || e.Text.Type != "plain_text" || e.Text.Text == "" || utf8.RuneCountInString(e.Text.Text) > 75 ||
					len(e.URL) > 3000 {
					return "invalid_blocks"
				}
			}
		}
	}
	return ""
}
