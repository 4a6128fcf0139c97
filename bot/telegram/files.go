package telegram

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	tg "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/excalibot/excalibot/bot"
)

// maxDownload is Telegram's limit for files a bot may download (getFile); a self-hosted Bot API
// server lifts it, but the adapter keeps to the public one.
const maxDownload = 20 << 20

// attachment describes a posted file, referred to by its file_id (which stays valid for the bot);
// its content is fetched only when the core asks (FetchFile).
func (a *Adapter) attachment(fileID, name, mime string, size int64) bot.Attachment {
	unnamed := name == ""
	if unnamed {
		name = "file"
	}
	return bot.Attachment{Name: name, MIME: mime, Size: size, Ref: fileID, Unnamed: unnamed}
}

var _ bot.FileFetcher = (*Adapter)(nil)

// FetchFile implements bot.FileFetcher.
func (a *Adapter) FetchFile(ctx context.Context, f bot.Attachment, limit int64) ([]byte, error) {
	if f.Ref == "" {
		return nil, fmt.Errorf("%s: no Telegram file id", f.Name)
	}
	return a.fetch(ctx, f.Ref, f.Name, f.Size, limit)
}

func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }

// fetch downloads a file: getFile for its path, then GET from the file URL, reading at most limit
// bytes (and never more than Telegram lets bots download).
func (a *Adapter) fetch(ctx context.Context, fileID, name string, size, limit int64) ([]byte, error) {
	if limit <= 0 || limit > maxDownload {
		limit = maxDownload
	}
	switch {
	case size > maxDownload:
		return nil, bot.UserError(fmt.Sprintf("%s is %s; Telegram lets bots download files up to 20 MB", name, megabytes(size)), nil)
	case size > limit:
		return nil, bot.UserError(fmt.Sprintf("%s is %s, more than the %s I accept", name, megabytes(size), megabytes(limit)), nil)
	}
	var f *models.File
	err := a.call(ctx, "getFile", func(ctx context.Context) (err error) {
		f, err = a.client.GetFile(ctx, &tg.GetFileParams{FileID: fileID})
		return err
	})
	if err != nil {
		if errors.Is(err, tg.ErrorBadRequest) {
			return nil, bot.UserError(fmt.Sprintf("Telegram would not hand over %s (files over 20 MB cannot be downloaded by bots)", name),
				fmt.Errorf("getFile for %s: %w", name, err))
		}
		return nil, fmt.Errorf("get %s from Telegram: %w", name, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.client.FileDownloadLink(f), nil)
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", name, redact(err))
	}
	resp, err := a.httpc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", name, redact(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("download %s: Telegram answered %s", name, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", name, redact(err))
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is more than the %s I accept", name, megabytes(limit))
	}
	return data, nil
}

// redact drops the URL from an HTTP client error: the file URL contains the bot token.
func redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}
