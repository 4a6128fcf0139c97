# excalibot: one static Go binary plus Chromium for rendering.
#   docker build -t excalibot .
#   docker run --rm -p 8080:8080 -v excalibot-data:/data \
#     -e OLLAMA_HOST=http://host.docker.internal:11434 -e TELEGRAM_BOT_TOKEN=... excalibot
# The web assets and the Excalidraw render bundle are committed (web/ui/dist, render/web/dist),
# so the build needs Go only.

FROM golang:1.26-trixie AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Pure Go (modernc.org/sqlite, pgx): no cgo, so the binary runs on any glibc or none.
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/excalibot ./cmd/excalibot

FROM debian:trixie-slim
# chromium renders the pictures; tini reaps Chromium's child processes and passes SIGTERM on;
# ca-certificates for Slack, Telegram and a remote Ollama over HTTPS.
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium ca-certificates tini \
 && rm -rf /var/lib/apt/lists/*
RUN useradd --system --uid 10001 --user-group --create-home --home-dir /home/excalibot excalibot \
 && mkdir /data && chown excalibot:excalibot /data
COPY --from=build /out/excalibot /usr/local/bin/excalibot

USER excalibot
ENV EXCALIBOT_LISTEN=0.0.0.0:8080 \
    EXCALIBOT_DATABASE=sqlite:/data/excalibot.db \
    EXCALIBOT_CHROME=/usr/bin/chromium
# SQLite lives here; with PostgreSQL (compose.yaml) the volume stays empty.
VOLUME /data
EXPOSE 8080
# serve lets running drawings finish for up to 30 s after SIGTERM: stop with `docker stop -t 40`.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--", "excalibot"]
CMD ["serve"]
