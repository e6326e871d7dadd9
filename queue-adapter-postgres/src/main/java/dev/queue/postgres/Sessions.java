package dev.queue.postgres;

import org.apache.ibatis.session.SqlSession;
import org.apache.ibatis.session.SqlSessionFactory;

import java.util.Objects;
import java.util.function.Function;

/**
 * Runs work in MyBatis sessions of the pool, through one area's mapper: one auto-committed statement, or one
 * transaction. (A caller's own connection and the listener's connection get sessions of their own through
 * {@link MyBatisSupport#sessionOn}.)
 */
final class Sessions {

    private final SqlSessionFactory factory;

    Sessions(SqlSessionFactory factory) {
        this.factory = Objects.requireNonNull(factory, "factory");
    }

    SqlSessionFactory factory() {
        return factory;
    }

    /** One statement of the mapper {@code area} in its own transaction (auto-commit). */
    <M, T> T autoCommit(String operation, Class<M> area, Function<M, T> work) {
        try (SqlSession session = factory.openSession(true)) {
            return work.apply(session.getMapper(area));
        } catch (RuntimeException e) {
            throw PostgresErrors.translate(operation, e);
        }
    }

    /**
     * One statement of the mapper {@code area} as the factory's actor: in a transaction of its own that first sets
     * {@code queue.actor} (empty without an actor) for that transaction only, for the triggers that record it (a
     * retry's attempt, schedule changes). What another borrower of the connection set is neither read nor kept.
     */
    <M, T> T asActor(String operation, Class<M> area, Function<M, T> work) {
        return inTransaction(operation, session -> {
            actLocally(session);
            return work.apply(session.getMapper(area));
        });
    }

    /** Sets the factory's actor (empty without one) for the rest of the session's transaction. */
    void actLocally(SqlSession session) {
        session.getMapper(MaintenanceMapper.class).actLocally();
    }

    /** Statements of a mapper without an interface (the operator's) in their own transaction (auto-commit). */
    <T> T autoCommit(String operation, Function<SqlSession, T> work) {
        try (SqlSession session = factory.openSession(true)) {
            return work.apply(session);
        } catch (RuntimeException e) {
            throw PostgresErrors.translate(operation, e);
        }
    }

    /**
     * Several statements in one transaction, committed at the end and rolled back on failure. (MyBatis only
     * commits sessions it saw writing through insert/update/delete; these statements write through selects, so
     * commit and rollback are forced.)
     */
    <T> T inTransaction(String operation, Function<SqlSession, T> work) {
        try (SqlSession session = factory.openSession(false)) {
            try {
                T result = work.apply(session);
                session.commit(true);
                return result;
            } catch (RuntimeException e) {
                try {
                    session.rollback(true);
                } catch (RuntimeException rollbackFailure) {
                    e.addSuppressed(rollbackFailure);
                }
                throw e;
            }
        } catch (RuntimeException e) {
            throw PostgresErrors.translate(operation, e);
        }
    }
}
