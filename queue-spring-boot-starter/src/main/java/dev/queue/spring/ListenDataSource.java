package dev.queue.spring;

import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;

/**
 * The DataSource of the LISTEN connection when {@code queue.listen-url} is set: unpooled, because the queue holds
 * that one connection for its whole life and reopens it itself after a loss.
 */
final class ListenDataSource {

    private ListenDataSource() {
    }

    /** Null when {@code queue.listen-url} is unset: the application's DataSource serves LISTEN too. */
    static DataSource of(QueueProperties properties) {
        String url = properties.getListenUrl();
        if (url == null || url.isBlank()) {
            return null;
        }
        if (!url.startsWith("jdbc:postgresql:")) {
            throw new InvalidQueuePropertyException("queue.listen-url", url,
                    "a PostgreSQL JDBC URL (jdbc:postgresql://host:port/database)", null);
        }
        PGSimpleDataSource listen = new PGSimpleDataSource();
        listen.setURL(url);
        if (properties.getListenUsername() != null) {
            listen.setUser(properties.getListenUsername());
        }
        if (properties.getListenPassword() != null) {
            listen.setPassword(properties.getListenPassword());
        }
        return listen;
    }
}
