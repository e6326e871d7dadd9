package dev.queue.postgres;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The cluster of Debian's server the tests start: it runs, restarts with its data, and leaves nothing behind. */
class LocalPostgresClusterTest {

    @Test
    void startsStopsRestartsAndCleansUp() throws SQLException {
        LocalPostgresCluster.assumeAvailable();
        Path data;
        try (LocalPostgresCluster cluster = LocalPostgresCluster.builder().setting("application_name", "local-test").start()) {
            data = cluster.dataDirectory();
            assertThat(cluster.isRunning()).isTrue();
            assertThat(cluster.jdbcUrl()).contains(":" + cluster.port() + "/");
            try (Connection connection = DriverManager.getConnection(cluster.jdbcUrl());
                 Statement statement = connection.createStatement()) {
                assertThat(single(statement, "SHOW server_version_num")).startsWith("15");
                assertThat(single(statement, "SHOW listen_addresses")).isEqualTo("localhost");
                assertThat(single(statement, "SHOW data_directory")).isEqualTo(data.toString());
                statement.execute("CREATE TABLE kept (x integer)");
            }

            cluster.stop();
            assertThat(cluster.isRunning()).isFalse();
            assertThatThrownBy(() -> DriverManager.getConnection(cluster.jdbcUrl()).close()).isInstanceOf(SQLException.class);

            cluster.start();
            try (Connection connection = DriverManager.getConnection(cluster.jdbcUrl());
                 Statement statement = connection.createStatement()) {
                assertThat(single(statement, "SELECT to_regclass('kept') IS NOT NULL")).isEqualTo("t");
            }
        }
        assertThat(Files.exists(data.getParent())).as("the cluster's directory is deleted").isFalse();
    }

    private static String single(Statement statement, String sql) throws SQLException {
        try (ResultSet rs = statement.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
