package dev.queue.cli;

import dev.queue.postgres.PostgresOperator;
import picocli.CommandLine.Option;

/**
 * The options every command shares: where the queue lives, and how to print. The database URL falls back to the
 * variable QUEUE_DATABASE_URL (a system property of that name first, then the environment), so scripts and
 * containers need not repeat it.
 */
final class Target {

    @Option(names = "--database-url", paramLabel = "URL", defaultValue = "${QUEUE_DATABASE_URL}",
            description = "JDBC URL of the database, e.g. jdbc:postgresql://db:5432/app?user=ops&password=... "
                    + "(default: the variable QUEUE_DATABASE_URL)")
    String databaseUrl;

    @Option(names = "--user", paramLabel = "USER", defaultValue = "${QUEUE_DATABASE_USER}",
            description = "database user, when not in the URL (default: the variable QUEUE_DATABASE_USER)")
    String user;

    @Option(names = "--password", paramLabel = "PASSWORD", defaultValue = "${QUEUE_DATABASE_PASSWORD}", interactive = false,
            description = "database password, when not in the URL (default: the variable QUEUE_DATABASE_PASSWORD)")
    String password;

    @Option(names = "--schema", paramLabel = "SCHEMA", defaultValue = "queue", description = "the queue's schema (default: ${DEFAULT-VALUE})")
    String schema;

    @Option(names = {"-n", "--namespace"}, paramLabel = "NAMESPACE", defaultValue = "default",
            description = "the namespace (tenant) to act on (default: ${DEFAULT-VALUE})")
    String namespace;

    @Option(names = "--json", description = "print JSON for scripts instead of tables")
    boolean json;

    PostgresOperator operator() {
        if (databaseUrl == null || databaseUrl.isBlank()) {
            throw new MissingDatabase();
        }
        return PostgresOperator.connect(databaseUrl.strip(), user, password, schema);
    }

    /** No URL given: a usage error, like a missing option. */
    static final class MissingDatabase extends RuntimeException {
        private static final long serialVersionUID = 1L;

        MissingDatabase() {
            super("no database given: pass --database-url=jdbc:postgresql://host:port/database or set QUEUE_DATABASE_URL");
        }
    }
}
