-- A run cut short (its process died, or stopped past its grace) is redone: the messages it took are
-- pending again, to be worked by the thread's next holder. interruptions counts how many times a
-- message's runs were cut short, so one that keeps cutting them short is given up (state failed,
-- with error saying why) instead of being redone forever.
ALTER TABLE inbox ADD COLUMN interruptions INTEGER NOT NULL DEFAULT 0;
ALTER TABLE inbox ADD COLUMN error TEXT NOT NULL DEFAULT '';
