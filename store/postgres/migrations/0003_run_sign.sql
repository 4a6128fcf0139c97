-- sign is the chat platform's handle on a run's working signs (its status message), so that a
-- process restarted after a crash can take down the signs of the runs it recovers. Empty when the
-- platform put none up.
ALTER TABLE runs ADD COLUMN sign TEXT NOT NULL DEFAULT '';
