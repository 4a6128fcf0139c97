-- Each process working on the store (an owner) says it is alive here with its heartbeat, as it
-- renews its leases: expires is when it is presumed dead. Messages and replies pinned to an owner
-- (threads that live in one process's memory, as the web chat's do) are taken over by another
-- owner once theirs is presumed dead, instead of waiting for a process that will not come back.
CREATE TABLE owners (
	owner   TEXT    PRIMARY KEY,
	expires BIGINT NOT NULL
);
