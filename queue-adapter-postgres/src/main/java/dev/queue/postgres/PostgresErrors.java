package dev.queue.postgres;

import dev.queue.api.NamespaceAccessDeniedException;
import dev.queue.api.QueueException;
import dev.queue.api.StoreUnavailableException;

import java.sql.SQLException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one place where driver, pool and MyBatis failures become the port's exception. Every path of the
 * adapter that talks to the database ends here on failure, so callers only ever see
 * {@link StoreUnavailableException} (or a {@link QueueException} the adapter threw on purpose).
 */
final class PostgresErrors {

    /** The queue's SQLSTATE for a namespace not granted to the login role ({@code _check_access}, R__tenants.sql). */
    static final String NOT_GRANTED = "QU005";
    /** PostgreSQL's insufficient_privilege. */
    static final String PERMISSION_DENIED = "42501";
    private static final Pattern NAMESPACE_NAMED = Pattern.compile("namespace \"([^\"]*)\"");

    private PostgresErrors() {
    }

    /**
     * The exception to throw for a failure of {@code operation}: {@code failure} itself when it is already one
     * of the queue's exceptions, otherwise a {@link StoreUnavailableException} naming the operation, the SQL
     * state when there is one, and the driver's message.
     */
    static RuntimeException translate(String operation, Throwable failure) {
        if (failure instanceof QueueException queueException) {
            return queueException;
        }
        if (failure instanceof Error error) {
            throw error;
        }
        SQLException sql = findSqlException(failure);
        if (sql != null && (NOT_GRANTED.equals(sql.getSQLState()) || PERMISSION_DENIED.equals(sql.getSQLState()))) {
            String detail = sql.getMessage() == null ? "" : sql.getMessage().strip();
            Matcher named = NAMESPACE_NAMED.matcher(detail);
            return new NamespaceAccessDeniedException(named.find() ? named.group(1) : null,
                    "PostgreSQL refused " + operation + " (SQL state " + sql.getSQLState() + "): " + detail
                            + (PERMISSION_DENIED.equals(sql.getSQLState())
                                    ? " (a tenant role may use the queue only through its SQL functions, docs/tenants.md)" : ""),
                    failure);
        }
        StringBuilder message = new StringBuilder("PostgreSQL failed during ").append(operation);
        if (sql != null && sql.getSQLState() != null) {
            message.append(" (SQL state ").append(sql.getSQLState()).append(')');
        }
        String detail = sql != null ? sql.getMessage() : failure.getMessage();
        if (detail != null) {
            message.append(": ").append(detail.strip());
        }
        return new StoreUnavailableException(message.toString(), failure);
    }

    static SQLException findSqlException(Throwable failure) {
        Throwable current = failure;
        for (int depth = 0; current != null && depth < 20; depth++) {
            if (current instanceof SQLException sql) {
                return sql;
            }
            current = current.getCause();
        }
        return null;
    }
}
