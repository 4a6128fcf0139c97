package ollama

import (
	"context"
	"encoding/json"
)

// ChatFormat sends one request without tools whose answer Ollama constrains to the JSON schema
// format (structured outputs); a nil format asks for a free answer. Some thinking models ignore
// the format when thinking is off, so the caller must still check what comes back.
func (o *Client) ChatFormat(ctx context.Context, msgs []Message, format json.RawMessage) (Reply, error) {
	req, err := o.request(msgs, nil)
	if err != nil {
		return Reply{}, err
	}
	req.Format = format
	return o.send(ctx, req)
}
