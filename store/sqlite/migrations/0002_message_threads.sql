-- Which thread a chat message belongs to, for platforms whose threads are reply chains (Telegram): a
-- reply to any message of a chain finds the chain's thread, after a restart or on another replica.
-- created is when the entry was last recorded (Unix milliseconds); Prune drops entries older than
-- its cutoff.
CREATE TABLE message_threads (
	platform TEXT    NOT NULL,
	chat     TEXT    NOT NULL,
	msg      TEXT    NOT NULL,
	thread   TEXT    NOT NULL,
	created  INTEGER NOT NULL,
	PRIMARY KEY (platform, chat, msg)
);
CREATE INDEX message_threads_created ON message_threads (created);
