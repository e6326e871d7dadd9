-- Limit slots: a topic whose only limit is a running limit for the whole topic has one row per unit of that limit,
-- and a claim seats each message it starts in a free slot, which it locks with SKIP LOCKED. So concurrent claims of
-- the topic take disjoint slots, and never more than the limit, without waiting for each other. A slot is free when
-- it is empty or its message no longer runs under the lease token it was seated with: the acknowledgement (or retry,
-- snooze, cancel, dead letter, rescue, release) that took it out of running frees the slot when it commits, without
-- writing here. Setting limits rebuilds the topic's slots and seats the messages running then. Slots numbered above
-- the limit hold messages that were running when it was lowered: a claim leaves as many free slots unused as those
-- still run.
CREATE TABLE "${schema}".limit_slots (
    namespace   text COLLATE "C" NOT NULL,
    topic       text COLLATE "C" NOT NULL,
    slot        integer          NOT NULL,
    message_id  bigint,
    lease_token bigint,
    CONSTRAINT limit_slots_pkey PRIMARY KEY (namespace, topic, slot),
    CONSTRAINT limit_slots_sane CHECK (slot >= 1 AND (message_id IS NULL) = (lease_token IS NULL))
)
-- each seating rewrites a row without changing an indexed column: with free space on the page the update is HOT
WITH (fillfactor = 50,
      autovacuum_vacuum_scale_factor = 0.0,
      autovacuum_vacuum_threshold = 1000,
      autovacuum_vacuum_cost_delay = 0);
