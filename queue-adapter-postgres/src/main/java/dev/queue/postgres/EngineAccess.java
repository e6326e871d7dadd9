package dev.queue.postgres;

import dev.queue.api.StoreNotReadyException;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * How the queue's statements reach the engine of migration 10: its functions directly ({@code _engine_*}, the
 * owner's only: a login that owns the schema or is a superuser), or through the gates of migration 13
 * ({@code engine_*}, SECURITY DEFINER, checking the namespaces against the login's grants first: the app role, a
 * tenant's role). The mapper XML names the functions {@code "${schema}".${engine}publish}.
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
     * What the login of {@code dataSource} may do in the schema: reach the engine directly, through the gates, and
     * whether it is trusted with every namespace (a schema without roles: any login that may use it).
     */
    record Login(String role, EngineAccess access, boolean trusted) {
    }

    /** Looks at the schema with the login of {@code dataSource}; the schema must be migrated. */
    static Login of(DataSource dataSource, String schema) {
        String q = "\"" + schema + "\"";
        try (Connection connection = dataSource.getConnection()) {
            String role;
            boolean direct;
            boolean gates;
            boolean rolesKnown;
            try (PreparedStatement statement = connection.prepareStatement(
                    "SELECT session_user::text, "
                    + "coalesce(has_function_privilege(to_regprocedure(?), 'EXECUTE'), false), "
                    + "to_regprocedure(?) IS NOT NULL, "
                    + "coalesce(has_function_privilege(to_regprocedure(?), 'EXECUTE'), false)");
                 ResultSet row = bind(statement, q + "._engine_find(text,bigint)", q + ".engine_find(text,bigint)",
                         q + ".is_trusted()").executeQuery()) {
                row.next();
                role = row.getString(1);
                direct = row.getBoolean(2);
                gates = row.getBoolean(3);
                rolesKnown = row.getBoolean(4);
            }
            boolean trusted = true;
            if (rolesKnown) {
                try (PreparedStatement statement = connection.prepareStatement("SELECT " + q + ".is_trusted()");
                     ResultSet row = statement.executeQuery()) {
                    row.next();
                    trusted = row.getBoolean(1);
                }
            }
            if (!direct && !gates) {
                throw new StoreNotReadyException("role \"" + role + "\" may not execute the engine functions of schema \""
                        + schema + "\", and the schema has no gates for it (migration 13): apply the migrations in "
                        + "db/queue/ as the schema's owner, or connect as the owner");
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
