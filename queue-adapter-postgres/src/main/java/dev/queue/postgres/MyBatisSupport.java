package dev.queue.postgres;

import org.apache.ibatis.builder.xml.XMLMapperBuilder;
import org.apache.ibatis.executor.Executor;
import org.apache.ibatis.io.Resources;
import org.apache.ibatis.mapping.Environment;
import org.apache.ibatis.session.Configuration;
import org.apache.ibatis.session.ExecutorType;
import org.apache.ibatis.session.LocalCacheScope;
import org.apache.ibatis.session.SqlSession;
import org.apache.ibatis.session.SqlSessionFactory;
import org.apache.ibatis.session.SqlSessionFactoryBuilder;
import org.apache.ibatis.session.defaults.DefaultSqlSession;
import org.apache.ibatis.transaction.jdbc.JdbcTransactionFactory;
import org.apache.ibatis.transaction.managed.ManagedTransaction;
import org.apache.ibatis.type.BaseTypeHandler;
import org.apache.ibatis.type.JdbcType;
import org.apache.ibatis.type.TypeHandlerRegistry;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.InputStream;
import java.sql.Array;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Properties;

/**
 * Builds the MyBatis configuration of one schema: the pool (or the caller's DataSource) under a
 * {@link JdbcTransactionFactory}, the mapper {@code QueueMapper.xml} with {@code ${schema}} bound to the validated
 * schema name, and the type handlers for {@code timestamptz} and PostgreSQL arrays.
 */
final class MyBatisSupport {

    static final String MAPPER = "dev/queue/postgres/QueueMapper.xml";
    /** The operator's statements (workers, health, explain, the CLI's calls), apart from the store's. */
    static final String OPERATOR_MAPPER = "dev/queue/postgres/OperatorMapper.xml";

    private MyBatisSupport() {
    }

    static SqlSessionFactory sessionFactory(DataSource dataSource, String schema) {
        PostgresQueueConfig.checkSchema(schema);
        Configuration configuration = new Configuration(new Environment("queue", new JdbcTransactionFactory(), dataSource));
        configuration.setMapUnderscoreToCamelCase(true);
        configuration.setCacheEnabled(false);
        configuration.setLocalCacheScope(LocalCacheScope.STATEMENT);
        configuration.setDefaultExecutorType(ExecutorType.SIMPLE);
        configuration.setJdbcTypeForNull(JdbcType.OTHER);
        Properties variables = new Properties();
        variables.setProperty("schema", schema);
        configuration.setVariables(variables);

        TypeHandlerRegistry handlers = configuration.getTypeHandlerRegistry();
        handlers.register(Instant.class, new InstantHandler());
        handlers.register(String[].class, new ArrayHandler<String>("text"));
        handlers.register(Long[].class, new ArrayHandler<Long>("int8"));
        handlers.register(Integer[].class, new ArrayHandler<Integer>("int4"));

        configuration.getTypeAliasRegistry().registerAlias("PublishRow", Rows.PublishRow.class);
        configuration.getTypeAliasRegistry().registerAlias("InfoRow", Rows.InfoRow.class);
        configuration.getTypeAliasRegistry().registerAlias("AttemptRow", Rows.AttemptRow.class);
        configuration.getTypeAliasRegistry().registerAlias("DeadLetterRow", Rows.DeadLetterRow.class);
        configuration.getTypeAliasRegistry().registerAlias("StatsRow", Rows.StatsRow.class);
        configuration.getTypeAliasRegistry().registerAlias("OutcomeRow", Rows.OutcomeRow.class);
        configuration.getTypeAliasRegistry().registerAlias("RescueRow", Rows.RescueRow.class);
        configuration.getTypeAliasRegistry().registerAlias("RedriveRow", Rows.RedriveRow.class);
        configuration.getTypeAliasRegistry().registerAlias("VersionRow", Rows.VersionRow.class);
        configuration.getTypeAliasRegistry().registerAlias("ScheduleRow", Rows.ScheduleRow.class);

        for (String resource : new String[] {MAPPER, OPERATOR_MAPPER}) {
            try (InputStream mapper = Resources.getResourceAsStream(MyBatisSupport.class.getClassLoader(), resource)) {
                new XMLMapperBuilder(mapper, configuration, resource, configuration.getSqlFragments()).parse();
            } catch (IOException e) {
                throw new IllegalStateException("cannot read " + resource + " from the class path", e);
            }
        }
        return new SqlSessionFactoryBuilder().build(configuration);
    }

    /**
     * A session over a connection the caller owns: it joins the caller's transaction, never commits, rolls back
     * or closes the connection.
     */
    static SqlSession sessionOn(SqlSessionFactory factory, Connection connection) {
        Configuration configuration = factory.getConfiguration();
        Executor executor = configuration.newExecutor(new ManagedTransaction(connection, false), ExecutorType.SIMPLE);
        return new DefaultSqlSession(configuration, executor, false);
    }

    /** timestamptz as {@link Instant}, through {@link OffsetDateTime} so no time zone of the JVM is involved. */
    static final class InstantHandler extends BaseTypeHandler<Instant> {

        @Override
        public void setNonNullParameter(PreparedStatement ps, int i, Instant parameter, JdbcType jdbcType) throws SQLException {
            ps.setObject(i, OffsetDateTime.ofInstant(parameter, ZoneOffset.UTC));
        }

        @Override
        public Instant getNullableResult(ResultSet rs, String columnName) throws SQLException {
            return toInstant(rs.getObject(columnName, OffsetDateTime.class));
        }

        @Override
        public Instant getNullableResult(ResultSet rs, int columnIndex) throws SQLException {
            return toInstant(rs.getObject(columnIndex, OffsetDateTime.class));
        }

        @Override
        public Instant getNullableResult(CallableStatement cs, int columnIndex) throws SQLException {
            return toInstant(cs.getObject(columnIndex, OffsetDateTime.class));
        }

        private static Instant toInstant(OffsetDateTime value) {
            return value == null ? null : value.toInstant();
        }
    }

    /** A Java array as a PostgreSQL array of the given element type (bound once, unnested in SQL). */
    static final class ArrayHandler<T> extends BaseTypeHandler<T[]> {

        private final String elementType;

        ArrayHandler(String elementType) {
            this.elementType = elementType;
        }

        @Override
        public void setNonNullParameter(PreparedStatement ps, int i, T[] parameter, JdbcType jdbcType) throws SQLException {
            Array array = ps.getConnection().createArrayOf(elementType, parameter);
            ps.setArray(i, array);
        }

        @Override
        public T[] getNullableResult(ResultSet rs, String columnName) {
            throw new UnsupportedOperationException("arrays are only bound, never read");
        }

        @Override
        public T[] getNullableResult(ResultSet rs, int columnIndex) {
            throw new UnsupportedOperationException("arrays are only bound, never read");
        }

        @Override
        public T[] getNullableResult(CallableStatement cs, int columnIndex) {
            throw new UnsupportedOperationException("arrays are only bound, never read");
        }
    }
}
