-- The inbox keeps every message the bot acknowledged to its platform until a run answers it; it is
-- written in the commit that claims the message's event ids. id is the order of receipt: the
-- commit that adds a message holds its thread's row, so the ids of one thread follow the order of
-- their commits. body is the message as the bot encodes it (text, sender, platform ids, file
-- references). state: pending, taken (by run_id), done, interrupted. pin, when set, is the only
-- owner that may take the message (threads living in one process's memory).
CREATE TABLE inbox (
	id       INTEGER PRIMARY KEY AUTOINCREMENT,
	tkey     TEXT    NOT NULL,
	platform TEXT    NOT NULL,
	body     BLOB    NOT NULL,
	state    TEXT    NOT NULL,
	run_id   INTEGER NOT NULL DEFAULT 0,
	pin      TEXT    NOT NULL DEFAULT '',
	created  INTEGER NOT NULL,
	updated  INTEGER NOT NULL
);
CREATE INDEX inbox_pending ON inbox (tkey, id) WHERE state = 'pending';
CREATE INDEX inbox_run ON inbox (run_id) WHERE run_id <> 0;
CREATE INDEX inbox_updated ON inbox (updated);

-- The outbox keeps what the bot has to post (replies, the taking down of working signs) until the
-- platform took it. A thread's rows are posted in id order. posted lists the platform's ids of the
-- parts already posted (one per line), so a retry goes on after them. due is the earliest next
-- attempt; claim_owner holds the row while it posts it, until claim_expires. state: pending, sent,
-- dead (given up; kept with last_error).
CREATE TABLE outbox (
	id            INTEGER PRIMARY KEY AUTOINCREMENT,
	tkey          TEXT    NOT NULL,
	platform      TEXT    NOT NULL,
	kind          TEXT    NOT NULL,
	body          BLOB    NOT NULL,
	run_id        INTEGER NOT NULL DEFAULT 0,
	pin           TEXT    NOT NULL DEFAULT '',
	state         TEXT    NOT NULL,
	posted        TEXT    NOT NULL DEFAULT '',
	attempts      INTEGER NOT NULL DEFAULT 0,
	due           INTEGER NOT NULL,
	claim_owner   TEXT    NOT NULL DEFAULT '',
	claim_expires INTEGER NOT NULL DEFAULT 0,
	last_error    TEXT    NOT NULL DEFAULT '',
	created       INTEGER NOT NULL,
	updated       INTEGER NOT NULL
);
CREATE INDEX outbox_pending ON outbox (tkey, id) WHERE state = 'pending';
CREATE INDEX outbox_run ON outbox (run_id) WHERE run_id <> 0;
CREATE INDEX outbox_updated ON outbox (updated);

-- A run finished with replies waits in state 'replying' until they are sent, then takes outcome.
ALTER TABLE runs ADD COLUMN outcome TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_tkey ON runs (tkey, state);
