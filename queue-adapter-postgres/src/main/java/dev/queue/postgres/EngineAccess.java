package dev.queue.postgres;

import dev.queue.api.StoreNotReadyException;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * How the queue's statements reach the engine: its functions directly ({@code _engine_*}, for the owner, a superuser
 * and the trusted roles), or through its gates ({@code engine_*}, SECURITY DEFINER, checking the namespaces against
 * the login's grants first: a tenant's role, also one that was granted EXECUTE on the engine functions by mistake,
 * which the engine refuses). Both live in the function files of {@code db/queue/} ({@code
 * R__publish.sql}, {@code R__claim.sql}, ...). The mapper XML names the functions {@code
 * "${schema}".${engine}publish}.
 */
enum EngineAccess {

    DIRECT("_engine_"),
    GATED("engine_");

    private final String prefix;

    EngineAccess(String prefix) {
        this.prefix = prefix;
    }

    String prefix() {
        return prefix;
    }

    /**
     * What the login of {@code dataSource} may do in the schema: reach the engine directly or through the gates, and
     * whether it is trusted with every namespace.
     */
    record Login(String role, EngineAccess access, boolean trusted) {
    }

    /** Looks at the schema with the login of {@code dataSource}; the schema must be migrated. */
    static Login of(DataSource dataSource, String schema) {
        String q = "\"" + schema + "\"";
        try (Connection connection = dataSource.getConnection()) {
            String role;
            boolean direct;
            boolean gated;
            // without USAGE on the schema, looking a function up in it fails: the login then may execute neither
            // (CASE, not AND: only CASE keeps the lookup from being evaluated)
            try (PreparedStatement statement = connection.prepareStatement(
                    "SELECT session_user::text, "
                    + "CASE WHEN u.usage THEN coalesce(has_function_privilege(to_regprocedure(?), 'EXECUTE'), false) "
                    + "ELSE false END, "
                    + "CASE WHEN u.usage THEN coalesce(has_function_privilege(to_regprocedure(?), 'EXECUTE'), false) "
                    + "ELSE false END "
                    + "FROM (SELECT has_schema_privilege(?, 'USAGE') AS usage) u");
                 ResultSet row = bind(statement, q + "._engine_find(text,bigint)", q + ".engine_find(text,bigint)",
                         schema).executeQuery()) {
                row.next();
                role = row.getString(1);
                direct = row.getBoolean(2);
                gated = row.getBoolean(3);
            }
            if (!direct && !gated) {
                throw new StoreNotReadyException("role \"" + role + "\" may execute neither the engine functions of "
                        + "schema \"" + schema + "\" nor their gates: grant it a role of the schema "
                        + "(docs/security.md), or connect as the schema's owner");
            }
            boolean trusted;
            try (PreparedStatement statement = connection.prepareStatement("SELECT " + q + ".is_trusted()");
                 ResultSet row = statement.executeQuery()) {
                row.next();
                trusted = row.getBoolean(1);
            }
            // EXECUTE on the engine alone is no trust: an administrator may have granted every function of the
            // schema to a tenant's login by mistake, and the engine refuses such a caller (QU005), so it uses the gates
            if (direct && !trusted) {
                if (!gated) {
                    throw new StoreNotReadyException("role \"" + role + "\" may execute the engine functions of schema \""
                            + schema + "\" but is not trusted with them (not a member of its owner, app or operator "
                            + "role), and may not execute their gates: grant it a role of the schema (docs/security.md)");
                }
                direct = false;
            }
            return new Login(role, direct ? DIRECT : GATED, trusted);
        } catch (SQLException | RuntimeException e) {
            throw PostgresErrors.translate("the check of what the login may do in schema " + schema, e);
        }
    }

    private static PreparedStatement bind(PreparedStatement statement, String... values) throws SQLException {
        for (int i = 0; i < values.length; i++) {
            statement.setString(i + 1, values[i]);
        }
        return statement;
    }
}
