package dev.queue.postgres;

import org.apache.ibatis.builder.xml.XMLMapperBuilder;
import org.apache.ibatis.cache.CacheKey;
import org.apache.ibatis.executor.Executor;
import org.apache.ibatis.executor.SimpleExecutor;
import org.apache.ibatis.io.Resources;
import org.apache.ibatis.mapping.Environment;
import org.apache.ibatis.mapping.MappedStatement;
import org.apache.ibatis.reflection.factory.DefaultObjectFactory;
import org.apache.ibatis.session.Configuration;
import org.apache.ibatis.session.ExecutorType;
import org.apache.ibatis.session.LocalCacheScope;
import org.apache.ibatis.session.ResultHandler;
import org.apache.ibatis.session.RowBounds;
import org.apache.ibatis.session.SqlSession;
import org.apache.ibatis.session.SqlSessionFactory;
import org.apache.ibatis.session.SqlSessionFactoryBuilder;
import org.apache.ibatis.session.defaults.DefaultSqlSession;
import org.apache.ibatis.transaction.Transaction;
import org.apache.ibatis.transaction.jdbc.JdbcTransactionFactory;
import org.apache.ibatis.transaction.managed.ManagedTransaction;
import org.apache.ibatis.type.BaseTypeHandler;
import org.apache.ibatis.type.JdbcType;
import org.apache.ibatis.type.TypeHandlerRegistry;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Constructor;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Builds the MyBatis configuration of one schema: the pool (or the caller's DataSource) under a
 * {@link JdbcTransactionFactory}, one mapper per area ({@link #MAPPERS}) with {@code ${schema}} bound to the
 * validated schema name, and the type handlers for {@code timestamptz}, PostgreSQL arrays and message headers.
 */
final class MyBatisSupport {

    /** The mapper of each area, named after its interface (the XML's namespace). */
    static final List<Class<?>> MAPPERS = List.of(MessageMapper.class, DeadLetterMapper.class, ScheduleMapper.class,
            WakeUpMapper.class, MaintenanceMapper.class, FlowControlMapper.class);

    /** The operator's statements (workers, health, explain, the CLI's calls), apart from the store's. */
    static final String OPERATOR_MAPPER = "dev/queue/postgres/OperatorMapper.xml";

    private MyBatisSupport() {
    }

    static SqlSessionFactory sessionFactory(DataSource dataSource, String schema) {
        return sessionFactory(dataSource, schema, null);
    }

    static SqlSessionFactory sessionFactory(DataSource dataSource, String schema, String actor) {
        return sessionFactory(dataSource, schema, actor, EngineAccess.DIRECT);
    }

    /**
     * @param actor  who the queue's writes are recorded as (PostgresQueueConfig.actor), null for nobody. It goes
     *               into the statements as a constant ({@code ${actor}}), so the engine never reads a session
     *               setting another user of a shared pool may have left on a connection; where triggers read it
     *               (retries, schedule and policy changes), {@link Sessions#asActor} sets it for one transaction.
     * @param engine how the statements reach the engine: its own functions ({@code _engine_*}), or their gates
     *               ({@code engine_*})
     */
    static SqlSessionFactory sessionFactory(DataSource dataSource, String schema, String actor, EngineAccess engine) {
        PostgresQueueConfig.checkSchema(schema);
        Configuration configuration = new QueueConfiguration(new Environment("queue", new JdbcTransactionFactory(), dataSource));
        configuration.setMapUnderscoreToCamelCase(true);
        configuration.setDefaultExecutorType(ExecutorType.SIMPLE);
        configuration.setJdbcTypeForNull(JdbcType.OTHER);
        configuration.setObjectFactory(new CachingObjectFactory());
        Properties variables = new Properties();
        variables.setProperty("schema", schema);
        variables.setProperty("actor", actorLiteral(actor));
        variables.setProperty("engine", engine.prefix());
        configuration.setVariables(variables);

        TypeHandlerRegistry handlers = configuration.getTypeHandlerRegistry();
        handlers.register(Instant.class, new InstantHandler());
        handlers.register(String[].class, new ArrayHandler<String>());
        handlers.register(Long[].class, new ArrayHandler<Long>());
        handlers.register(Integer[].class, new ArrayHandler<Integer>());
        handlers.register(Boolean[].class, new ArrayHandler<Boolean>());

        for (Class<?> mapper : MAPPERS) {
            String resource = mapper.getName().replace('.', '/') + ".xml";
            try (InputStream xml = Resources.getResourceAsStream(MyBatisSupport.class.getClassLoader(), resource)) {
                // parsing binds the namespace to its interface (configuration.addMapper)
                new XMLMapperBuilder(xml, configuration, resource, configuration.getSqlFragments()).parse();
            } catch (IOException e) {
                throw new IllegalStateException("cannot read " + resource + " from the class path", e);
            }
        }
        try (InputStream xml = Resources.getResourceAsStream(MyBatisSupport.class.getClassLoader(), OPERATOR_MAPPER)) {
            new XMLMapperBuilder(xml, configuration, OPERATOR_MAPPER, configuration.getSqlFragments()).parse();
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + OPERATOR_MAPPER + " from the class path", e);
        }
        return new SqlSessionFactoryBuilder().build(configuration);
    }

    /**
     * The actor as SQL text: hex digits decoded by the server, so no quote or backslash in the name can end the
     * literal, whatever standard_conforming_strings says.
     */
    static String actorLiteral(String actor) {
        if (actor == null) {
            return "NULL::text";
        }
        StringBuilder hex = new StringBuilder();
        for (byte b : actor.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
            hex.append(Character.forDigit((b >> 4) & 0xF, 16)).append(Character.forDigit(b & 0xF, 16));
        }
        return "convert_from(decode('" + hex + "', 'hex'), 'UTF8')";
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

    /**
     * MyBatis' configuration with sessions whose queries skip the local cache's key. MyBatis computes a key for every
     * query (reading each parameter value again through reflection) before it looks at the session's local cache.
     * With that cache scoped to the statement ({@link LocalCacheScope#STATEMENT}, fixed here) an entry is dropped as
     * soon as its statement ends, so no later query can hit it: the key is work for nothing on every call.
     */
    static final class QueueConfiguration extends Configuration {

        QueueConfiguration(Environment environment) {
            super(environment);
            super.setLocalCacheScope(LocalCacheScope.STATEMENT);
            super.setCacheEnabled(false);
        }

        @Override
        public void setLocalCacheScope(LocalCacheScope scope) {
            if (scope != LocalCacheScope.STATEMENT) {
                throw new IllegalArgumentException("local cache scope " + scope + ": the queue's sessions skip the "
                        + "local cache's keys, which is right only with the scope STATEMENT");
            }
        }

        @Override
        public Executor newExecutor(Transaction transaction, ExecutorType executorType) {
            if (executorType != null && executorType != ExecutorType.SIMPLE) {
                return super.newExecutor(transaction, executorType);
            }
            return (Executor) interceptorChain.pluginAll(new StatementScopedExecutor(this, transaction));
        }
    }

    /** MyBatis' simple executor, its queries given MyBatis' null cache key (see {@link QueueConfiguration}). */
    static final class StatementScopedExecutor extends SimpleExecutor {

        StatementScopedExecutor(Configuration configuration, Transaction transaction) {
            super(configuration, transaction);
        }

        @Override
        public <E> List<E> query(MappedStatement statement, Object parameter, RowBounds rowBounds,
                                 ResultHandler resultHandler) throws SQLException {
            return query(statement, parameter, rowBounds, resultHandler, CacheKey.NULL_CACHE_KEY,
                    statement.getBoundSql(parameter));
        }
    }

    /**
     * MyBatis' object factory with the constructors it looks up kept, made accessible once. The default factory looks
     * a constructor up on every call (a fresh reflective copy, so the JDK checks access again each time), for the
     * result list of every statement and for every row mapped through a constructor (a claimed message).
     */
    static final class CachingObjectFactory extends DefaultObjectFactory {

        private static final long serialVersionUID = 1L;

        private final transient Map<Class<?>, Map<List<Class<?>>, Constructor<?>>> constructors = new ConcurrentHashMap<>();

        @Override
        public <T> T create(Class<T> type) {
            return create(type, null, null);
        }

        @Override
        public <T> T create(Class<T> type, List<Class<?>> argTypes, List<Object> args) {
            if (argTypes == null && (type == List.class || type == Collection.class || type == Iterable.class
                    || type == ArrayList.class)) {
                return type.cast(new ArrayList<>());
            }
            Class<?> concrete = resolveInterface(type);
            List<Class<?>> key = argTypes == null ? List.of() : List.copyOf(argTypes);
            Constructor<?> constructor = constructors.computeIfAbsent(concrete, c -> new ConcurrentHashMap<>())
                    .computeIfAbsent(key, k -> accessibleConstructor(concrete, k));
            if (constructor == null) {
                return super.create(type, argTypes, args);
            }
            try {
                Object[] values = args == null ? new Object[0] : args.toArray();
                return type.cast(constructor.newInstance(values));
            } catch (ReflectiveOperationException | IllegalArgumentException e) {
                // the default factory words the error with the type and the arguments
                return super.create(type, argTypes, args);
            }
        }

        private static Constructor<?> accessibleConstructor(Class<?> type, List<Class<?>> argTypes) {
            try {
                Constructor<?> constructor = type.getDeclaredConstructor(argTypes.toArray(new Class<?>[0]));
                constructor.setAccessible(true);
                return constructor;
            } catch (ReflectiveOperationException | RuntimeException e) {
                return null;
            }
        }
    }

    /**
     * Message headers, a jsonb column read as text, as the unmodifiable map the port carries. Public with a public
     * constructor: MyBatis instantiates the handlers that result maps name.
     */
    public static final class HeadersHandler extends BaseTypeHandler<Map<String, String>> {

        public HeadersHandler() {
            // for MyBatis
        }

        @Override
        public void setNonNullParameter(PreparedStatement ps, int i, Map<String, String> parameter, JdbcType jdbcType)
                throws SQLException {
            ps.setString(i, HeadersJson.write(parameter));
        }

        @Override
        public Map<String, String> getNullableResult(ResultSet rs, String columnName) throws SQLException {
            return HeadersJson.read(rs.getString(columnName));
        }

        @Override
        public Map<String, String> getNullableResult(ResultSet rs, int columnIndex) throws SQLException {
            return HeadersJson.read(rs.getString(columnIndex));
        }

        @Override
        public Map<String, String> getNullableResult(CallableStatement cs, int columnIndex) throws SQLException {
            return HeadersJson.read(cs.getString(columnIndex));
        }
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

    /**
     * A Java array ({@code String[]}, {@code Long[]}, {@code Integer[]}, {@code Boolean[]}) as a PostgreSQL array, bound once and
     * unnested in SQL. {@code setObject} encodes it with the array type's fixed OID; {@code createArrayOf} would
     * look the type up by name on every call.
     */
    static final class ArrayHandler<T> extends BaseTypeHandler<T[]> {

        @Override
        public void setNonNullParameter(PreparedStatement ps, int i, T[] parameter, JdbcType jdbcType) throws SQLException {
            ps.setObject(i, parameter);
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
