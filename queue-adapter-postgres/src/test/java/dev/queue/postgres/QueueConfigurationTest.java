package dev.queue.postgres;

import org.apache.ibatis.session.LocalCacheScope;
import org.apache.ibatis.session.SqlSession;
import org.apache.ibatis.session.SqlSessionFactory;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The queue's MyBatis configuration, whose sessions skip the local cache's keys. */
class QueueConfigurationTest {

    @Test
    void aQueryRunTwiceInOneSessionSeesWhatChangedInBetween() {
        String schema = PostgresTestServer.freshSchema("configuration");
        SqlSessionFactory factory = MyBatisSupport.sessionFactory(PostgresTestServer.dataSource(), schema);
        SchemaMigrator.migrate(factory, schema);
        try (SqlSession session = factory.openSession(true)) {
            MaintenanceMapper mapper = session.getMapper(MaintenanceMapper.class);
            List<MaintenanceMapper.Version> before = mapper.appliedVersions();

            PostgresTestServer.execute("DELETE FROM \"" + schema + "\".schema_version WHERE version = 1");
            List<MaintenanceMapper.Version> after = mapper.appliedVersions();

            assertThat(before).extracting(MaintenanceMapper.Version::version).contains(1);
            assertThat(after).extracting(MaintenanceMapper.Version::version).doesNotContain(1).hasSize(before.size() - 1);
        }
    }

    @Test
    void theSessionsAreTheStatementScopedOnes() {
        SqlSessionFactory factory = MyBatisSupport.sessionFactory(PostgresTestServer.dataSource(), "configuration_unused");

        assertThat(factory.getConfiguration()).isInstanceOf(MyBatisSupport.QueueConfiguration.class);
        assertThat(factory.getConfiguration().getLocalCacheScope()).isEqualTo(LocalCacheScope.STATEMENT);
        assertThat(factory.getConfiguration().isCacheEnabled()).isFalse();
    }

    @Test
    void theLocalCacheScopeCannotBeWidened() {
        SqlSessionFactory factory = MyBatisSupport.sessionFactory(PostgresTestServer.dataSource(), "configuration_unused");

        assertThatThrownBy(() -> factory.getConfiguration().setLocalCacheScope(LocalCacheScope.SESSION))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("SESSION");
    }
}
