-- Times are Unix milliseconds (UTC); 0 means "never" for expiry and revocation.
CREATE TABLE threads (
	id       INTEGER PRIMARY KEY,
	tkey     TEXT    NOT NULL UNIQUE, -- platform/workspace/channel/thread, path-escaped
	rev      INTEGER NOT NULL DEFAULT 0, -- current revision (the undo/redo cursor)
	head     INTEGER NOT NULL DEFAULT 0, -- newest revision number
	memory   BLOB,
	settings TEXT    NOT NULL DEFAULT '{}',
	created  INTEGER NOT NULL,
	updated  INTEGER NOT NULL
);
CREATE INDEX threads_updated ON threads (updated);

CREATE TABLE revisions (
	thread_id INTEGER NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
	rev       INTEGER NOT NULL,
	parent    INTEGER NOT NULL,
	author    TEXT    NOT NULL,
	reason    TEXT    NOT NULL,
	scene     BLOB    NOT NULL,
	created   INTEGER NOT NULL,
	PRIMARY KEY (thread_id, rev)
);
CREATE INDEX revisions_parent ON revisions (thread_id, parent);

CREATE TABLE links (
	hash      BLOB    PRIMARY KEY, -- SHA-256 of the token
	thread_id INTEGER NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
	kind      TEXT    NOT NULL,
	created   INTEGER NOT NULL,
	expires   INTEGER NOT NULL,
	revoked   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX links_thread ON links (thread_id);

CREATE TABLE events (
	id      TEXT    PRIMARY KEY,
	expires INTEGER NOT NULL
);
CREATE INDEX events_expires ON events (expires);

CREATE TABLE leases (
	tkey       TEXT    PRIMARY KEY,
	owner      TEXT    NOT NULL,
	expires    INTEGER NOT NULL,
	generation INTEGER NOT NULL
);
CREATE INDEX leases_owner ON leases (owner);

CREATE TABLE runs (
	id      INTEGER PRIMARY KEY AUTOINCREMENT,
	tkey    TEXT    NOT NULL,
	owner   TEXT    NOT NULL,
	state   TEXT    NOT NULL,
	detail  TEXT    NOT NULL,
	created INTEGER NOT NULL,
	updated INTEGER NOT NULL
);
CREATE INDEX runs_state ON runs (state);
