package dev.queue.architecture;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The packages the rules name, in one place, so a rule and the check that its package exists cannot drift apart. */
final class Layers {

    static final String ROOT = "dev.queue";

    static final String API = "dev.queue.api..";
    static final String DOMAIN = "dev.queue.domain..";
    static final String CODEC = "dev.queue.codec..";
    static final String TESTKIT = "dev.queue.testkit..";
    static final String POSTGRES = "dev.queue.postgres..";
    static final String INMEMORY = "dev.queue.inmemory..";
    /** Plug-ins beyond the hexagon: each sees the queue through the API only. */
    static final String MICROMETER = "dev.queue.micrometer..";
    static final String OPENTELEMETRY = "dev.queue.opentelemetry..";

    /** The Spring Boot starter: outside the hexagon, on the API and the PostgreSQL adapter's public types. */
    static final String SPRING_STARTER = "dev.queue.spring..";

    /** The operator's command line: outside the hexagon, on the API and PostgresOperator. */
    static final String CLI = "dev.queue.cli..";

    /** The operator's web dashboard: outside the hexagon, on the API, PostgresOperator and the JDK's HTTP server. */
    static final String DASHBOARD = "dev.queue.dashboard..";

    /** Every package of ours a rule names; each must hold classes, or a rule about it proves nothing. */
    static final List<String> OURS = List.of(API, DOMAIN, CODEC, TESTKIT, INMEMORY, POSTGRES, MICROMETER, OPENTELEMETRY,
            SPRING_STARTER, CLI, DASHBOARD);

    static final String[] ADAPTERS = {POSTGRES, INMEMORY};

    static final String JACKSON = "com.fasterxml.jackson..";

    /** The Spring Framework, which only modules outside the hexagon may use; {@link #INFRASTRUCTURE} checks it exists. */
    static final String SPRING_FRAMEWORK = "org.springframework..";

    /** Our packages inside the hexagon. */
    static final String[] HEXAGON = {API, DOMAIN, CODEC, TESTKIT, POSTGRES, INMEMORY};

    /**
     * Libraries only adapters (and the codec, for Jackson) may touch, each with a class it holds: a misspelt
     * package name would make a "must not depend on" rule pass vacuously, so the existence of each is tested.
     */
    static final Map<String, String> INFRASTRUCTURE = infrastructure();

    private static Map<String, String> infrastructure() {
        Map<String, String> packages = new LinkedHashMap<>();
        packages.put("java.sql..", "java.sql.Connection");
        packages.put("javax.sql..", "javax.sql.DataSource");
        packages.put("org.apache.ibatis..", "org.apache.ibatis.session.SqlSession");
        packages.put(JACKSON, "com.fasterxml.jackson.databind.ObjectMapper");
        packages.put("com.zaxxer..", "com.zaxxer.hikari.HikariDataSource");
        packages.put("org.postgresql..", "org.postgresql.Driver");
        return packages;
    }

    static String[] infrastructurePackages() {
        return INFRASTRUCTURE.keySet().toArray(String[]::new);
    }

    private Layers() {
    }
}
