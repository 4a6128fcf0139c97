package slackfake

import (
	"encoding/json"
	"unicode/utf8"
)

// checkBlocks applies Block Kit's limits that a reply can run into (docs.slack.dev/reference/block-kit):
// at most 50 blocks, section text up to 3 000 characters, up to 25 elements in an actions block,
// button labels up to 75 characters and URLs up to 3 000. Slack answers "invalid_blocks" to the
// whole message when one is broken. It also refuses a message whose blocks hold more than about
// 13 000 characters of text in all with "msg_blocks_too_long" (not documented; reported in
// slackapi/bolt-js#2509), though each section is within its limit.
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
	total := 0
	for _, b := range blocks {
		switch b.Type {
		case "section":
			if b.Text == nil || b.Text.Text == "" || utf8.RuneCountInString(b.Text.Text) > 3000 {
				return "invalid_blocks"
			}
			total += utf8.RuneCountInString(b.Text.Text)
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
	if total > maxBlocksText {
		return "msg_blocks_too_long"
	}
	return ""
}

// maxBlocksText is the most text the blocks of one message may hold in all.
const maxBlocksText = 13000
