-- Times are Unix milliseconds (UTC); 0 means "never" for expiry and revocation.
CREATE TABLE threads (
	id       BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	tkey     TEXT    NOT NULL UNIQUE, -- platform/workspace/channel/thread, path-escaped
	rev      BIGINT  NOT NULL DEFAULT 0, -- current revision (the undo/redo cursor)
	head     BIGINT  NOT NULL DEFAULT 0, -- newest revision number
	memory   BYTEA,
	settings TEXT    NOT NULL DEFAULT '{}',
	created  BIGINT  NOT NULL,
	updated  BIGINT  NOT NULL
);
CREATE INDEX threads_updated ON threads (updated);

CREATE TABLE revisions (
	thread_id BIGINT  NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
	rev       BIGINT  NOT NULL,
	parent    BIGINT  NOT NULL,
	author    TEXT    NOT NULL,
	reason    TEXT    NOT NULL,
	scene     BYTEA   NOT NULL,
	created   BIGINT  NOT NULL,
	PRIMARY KEY (thread_id, rev)
);
CREATE INDEX revisions_parent ON revisions (thread_id, parent);

CREATE TABLE links (
	hash      BYTEA   PRIMARY KEY, -- SHA-256 of the token
	thread_id BIGINT  NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
	kind      TEXT    NOT NULL,
	created   BIGINT  NOT NULL,
	expires   BIGINT  NOT NULL,
	revoked   BIGINT  NOT NULL DEFAULT 0
);
CREATE INDEX links_thread ON links (thread_id);

CREATE TABLE events (
	id      TEXT    PRIMARY KEY,
	expires BIGINT  NOT NULL
);
CREATE INDEX events_expires ON events (expires);

CREATE TABLE leases (
	tkey       TEXT    PRIMARY KEY,
	owner      TEXT    NOT NULL,
	expires    BIGINT  NOT NULL,
	generation BIGINT  NOT NULL
);
CREATE INDEX leases_owner ON leases (owner);

CREATE TABLE runs (
	id      BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	tkey    TEXT    NOT NULL,
	owner   TEXT    NOT NULL,
	state   TEXT    NOT NULL,
	detail  TEXT    NOT NULL,
	created BIGINT  NOT NULL,
	updated BIGINT  NOT NULL
);
CREATE INDEX runs_state ON runs (state);
