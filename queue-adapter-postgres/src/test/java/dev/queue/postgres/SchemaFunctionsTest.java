package dev.queue.postgres;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A guard against drift: every function of a freshly migrated schema comes from exactly one function file, each
 * name has one live signature, entry points run as the owner with a fixed search_path, and no versioned migration
 * creates functions.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SchemaFunctionsTest {

    /** Names with more than one live signature, which docs/postgres.md must list; none today. */
    private static final Set<String> DOCUMENTED_OVERLOADS = Set.of();

    private static final Pattern CREATE = Pattern.compile(
            "CREATE\\s+(?:OR\\s+REPLACE\\s+)?(?:FUNCTION|PROCEDURE)\\s+\"\\$\\{schema}\"\\.([a-z_0-9]+)\\s*\\(",
            Pattern.CASE_INSENSITIVE);

    private HikariDataSource pool;
    private String schema;

    @BeforeAll
    void migrate() {
        pool = PostgresTestServer.newPool("functions", 2);
        schema = PostgresTestServer.freshSchema("fns");
        SchemaMigrator.migrate(MyBatisSupport.sessionFactory(pool, schema), schema);
    }

    @AfterAll
    void drop() {
        PostgresTestServer.dropSchema(schema);
        pool.close();
    }

    @Test
    void everyLiveFunctionIsCreatedInExactlyOneFunctionFileAndNowhereElse() throws SQLException {
        Map<String, List<String>> creators = new TreeMap<>();
        for (SchemaMigrator.FunctionFile file : SchemaMigrator.FUNCTION_FILES) {
            Matcher matcher = CREATE.matcher(SchemaMigrator.read(file.resource()));
            while (matcher.find()) {
                creators.computeIfAbsent(matcher.group(1), name -> new ArrayList<>()).add(file.file());
            }
        }
        for (SchemaMigrator.Migration migration : SchemaMigrator.MIGRATIONS) {
            assertThat(CREATE.matcher(SchemaMigrator.read(migration.resource())).find())
                    .as("%s creates a function: functions belong in the function files", migration.resource()).isFalse();
        }
        assertThat(CREATE.matcher(SchemaMigrator.read(SchemaMigrator.AFTER_MIGRATE)).find()).isFalse();

        List<String> live = column("SELECT p.proname FROM pg_proc p WHERE p.pronamespace = '" + schema
                + "'::regnamespace ORDER BY 1");
        assertThat(live).hasSizeGreaterThan(200);
        for (String name : live) {
            assertThat(creators.get(name)).as("the files creating %s", name).hasSize(1);
        }
        assertThat(creators.keySet()).as("every function a file creates is live").containsExactlyInAnyOrderElementsOf(Set.copyOf(live));
    }

    @Test
    void noNameHasTwoLiveSignaturesUnlessTheDocsListIt() throws SQLException {
        assertThat(column("SELECT p.proname FROM pg_proc p WHERE p.pronamespace = '" + schema + "'::regnamespace"
                + " GROUP BY p.proname HAVING count(*) > 1")).containsExactlyInAnyOrderElementsOf(DOCUMENTED_OVERLOADS);
    }

    @Test
    void entryPointsAndTriggersRunAsTheOwnerWithAFixedSearchPathAndNothingElseDoes() throws SQLException {
        String fixedPath = "search_path=pg_catalog, " + schema + ", pg_temp";
        List<String> wrong = column("""
                SELECT p.oid::regprocedure::text || ' secdef=' || p.prosecdef || ' config=' || coalesce(p.proconfig::text, '')
                FROM pg_proc p
                WHERE p.pronamespace = '%1$s'::regnamespace AND p.prokind = 'f'
                  AND (left(p.proname, 1) <> '_' OR p.prorettype = 'pg_catalog.trigger'::pg_catalog.regtype)
                      IS DISTINCT FROM (p.prosecdef AND '%2$s' = ANY (p.proconfig))
                """.formatted(schema, fixedPath));
        assertThat(wrong).isEmpty();
    }

    @Test
    void noFunctionNameCarriesAVersionNumber() throws SQLException {
        assertThat(column("SELECT p.proname FROM pg_proc p WHERE p.pronamespace = '" + schema + "'::regnamespace"
                + " AND p.proname ~ '(^|_)v?[0-9]+(_|$)'")).isEmpty();
    }

    private List<String> column(String sql) throws SQLException {
        List<String> values = new ArrayList<>();
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery(sql)) {
            while (rows.next()) {
                values.add(rows.getString(1));
            }
        }
        return values;
    }
}
