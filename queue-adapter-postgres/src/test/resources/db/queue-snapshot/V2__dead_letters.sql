-- queue schema, version 2: dead letters, apart from the hot table so that failed messages neither slow claims
-- nor bloat the claim index. A dead letter keeps the id it had while live, a redrive moves it back with it.

CREATE TABLE "${schema}".dead_letters (
    id           bigint      NOT NULL,
    namespace    text        NOT NULL,
    topic        text        NOT NULL,
    payload      json        NOT NULL,
    headers      jsonb       NOT NULL DEFAULT '{}'::jsonb,
    priority     smallint    NOT NULL,
    attempts     integer     NOT NULL,
    max_attempts integer     NOT NULL,
    unique_key   text,
    last_error   text        NOT NULL,
    published_at timestamptz NOT NULL,
    failed_at    timestamptz NOT NULL,
    CONSTRAINT dead_letters_pkey PRIMARY KEY (id),
    CONSTRAINT dead_letters_sane CHECK (attempts >= 0 AND max_attempts >= 1 AND priority BETWEEN 0 AND 9)
);

-- Listings are per namespace (optionally per topic), oldest first by id, paged by id.
CREATE INDEX dead_letters_namespace_idx ON "${schema}".dead_letters (namespace, id);
CREATE INDEX dead_letters_topic_idx ON "${schema}".dead_letters (namespace, topic, id);
