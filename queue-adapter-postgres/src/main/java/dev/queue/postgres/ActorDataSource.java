package dev.queue.postgres;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * The application's DataSource, with the queue's actor ({@link PostgresQueueConfig#actor(String)}) set on every
 * connection the queue borrows: the session setting {@code queue.actor}, which the schema records in its audit
 * trail. Session-level, so it holds for every transaction the queue runs on the connection (and stays on it).
 */
final class ActorDataSource implements DataSource {

    private final DataSource delegate;
    private final String actor;

    ActorDataSource(DataSource delegate, String actor) {
        this.delegate = delegate;
        this.actor = actor;
    }

    private Connection withActor(Connection connection) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement("SELECT set_config('queue.actor', ?, false)")) {
            statement.setString(1, actor);
            statement.execute();
        } catch (SQLException | RuntimeException e) {
            connection.close();
            throw e;
        }
        return connection;
    }

    @Override
    public Connection getConnection() throws SQLException {
        return withActor(delegate.getConnection());
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return withActor(delegate.getConnection(username, password));
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return delegate.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        delegate.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        delegate.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return delegate.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        return delegate.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> type) throws SQLException {
        return type.isInstance(this) ? type.cast(this) : delegate.unwrap(type);
    }

    @Override
    public boolean isWrapperFor(Class<?> type) throws SQLException {
        return type.isInstance(this) || delegate.isWrapperFor(type);
    }
}
