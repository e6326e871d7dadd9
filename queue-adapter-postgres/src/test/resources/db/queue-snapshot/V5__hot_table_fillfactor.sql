-- queue schema, version 5: more free space in each page of the hot table.
--
-- A claim rewrites every message it takes (state, lease, worker), and that new row version is a little larger
-- than the pending one. With fillfactor 80 most of them no longer fit on the page of the old version, and an
-- update that moves to another page first writes a row lock of its own to the WAL and then a larger update
-- record. Measured on a busy queue (pg_waldump of 5 s of load): 0.85 such extra lock records per message, against
-- 0.24 with fillfactor 50. Half-empty pages cost little here: the table holds only live messages, and vacuum
-- and on-page pruning keep returning the space of completed ones. Applies to pages filled from now on.
ALTER TABLE "${schema}".messages SET (fillfactor = 50);
