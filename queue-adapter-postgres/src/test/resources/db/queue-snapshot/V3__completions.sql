-- queue schema, version 3: what remains of completed messages (counters, optionally an archive) and the
-- registry of topics used.

-- Every (namespace, topic) that ever held a message, so stats list a topic even after its messages are gone.
CREATE TABLE "${schema}".topics (
    namespace          text        NOT NULL,
    topic              text        NOT NULL,
    first_published_at timestamptz NOT NULL,
    CONSTRAINT topics_pkey PRIMARY KEY (namespace, topic)
);

-- Completed messages per topic. One row per topic would serialise every acknowledgement of a busy topic on
-- one row lock, so each topic has up to 16 shard rows (picked by the backend's process id) and stats sum them.
CREATE TABLE "${schema}".completed_counters (
    namespace text     NOT NULL,
    topic     text     NOT NULL,
    shard     smallint NOT NULL,
    completed bigint   NOT NULL DEFAULT 0,
    CONSTRAINT completed_counters_pkey PRIMARY KEY (namespace, topic, shard),
    CONSTRAINT completed_counters_sane CHECK (shard BETWEEN 0 AND 15 AND completed >= 0)
)
-- Each acknowledgement rewrites one counter row. No indexed column changes, so with free space on the page
-- (fillfactor 50) every such update is HOT, and frequent vacuuming keeps the table a few pages long.
WITH (fillfactor = 50,
      autovacuum_vacuum_scale_factor = 0.0,
      autovacuum_vacuum_threshold = 1000,
      autovacuum_vacuum_cost_delay = 0);

-- Completed messages, when PostgresQueueConfig.completedRetention(ARCHIVE) keeps them (the default, DELETE,
-- does not write here). Pruning is the operator's choice: DELETE ... WHERE completed_at < ...
CREATE TABLE "${schema}".completed_messages (
    id           bigint      NOT NULL,
    namespace    text        NOT NULL,
    topic        text        NOT NULL,
    payload      json        NOT NULL,
    headers      jsonb       NOT NULL DEFAULT '{}'::jsonb,
    priority     smallint    NOT NULL,
    attempts     integer     NOT NULL,
    max_attempts integer     NOT NULL,
    unique_key   text,
    worker       text,
    published_at timestamptz NOT NULL,
    completed_at timestamptz NOT NULL,
    CONSTRAINT completed_messages_pkey PRIMARY KEY (id)
);

CREATE INDEX completed_messages_completed_at_idx ON "${schema}".completed_messages (completed_at);
CREATE INDEX completed_messages_topic_idx ON "${schema}".completed_messages (namespace, topic, id);
