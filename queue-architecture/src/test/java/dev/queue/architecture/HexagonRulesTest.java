package dev.queue.architecture;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static dev.queue.architecture.Layers.ADAPTERS;
import static dev.queue.architecture.Layers.API;
import static dev.queue.architecture.Layers.CODEC;
import static dev.queue.architecture.Layers.DOMAIN;
import static dev.queue.architecture.Layers.INMEMORY;
import static dev.queue.architecture.Layers.JACKSON;
import static dev.queue.architecture.Layers.MICROMETER;
import static dev.queue.architecture.Layers.OPENTELEMETRY;
import static dev.queue.architecture.Layers.POSTGRES;
import static dev.queue.architecture.Layers.SPRING_STARTER;
import static dev.queue.architecture.Layers.TESTKIT;

/**
 * The dependency rules of the hexagon, checked on the bytecode of every production class under {@code dev.queue}.
 * Every rule fails when the classes it is about are missing ({@code allowEmptyShould(false)}), so a misspelt or
 * emptied package cannot make it pass; {@link LayerPackagesTest} also checks the packages rules only point at.
 * An unused import leaves no trace in bytecode: {@link ForbiddenImportsInSourceTest} reads the sources for that.
 */
@AnalyzeClasses(packages = Layers.ROOT, importOptions = ImportOption.DoNotIncludeTests.class)
class HexagonRulesTest {

    @ArchTest
    static final ArchRule the_api_depends_on_nothing_but_java_and_itself =
            classes().that().resideInAPackage(API)
                    .should().onlyDependOnClassesThat().resideInAnyPackage(API, "java..")
                    .because("the API is what applications compile against; it must not drag in any library")
                    .allowEmptyShould(false);

    @ArchTest
    static final ArchRule the_domain_depends_on_no_adapter =
            noClasses().that().resideInAPackage(DOMAIN)
                    .should().dependOnClassesThat().resideInAnyPackage(ADAPTERS)
                    .because("adapters plug into the domain's ports, never the other way round")
                    .allowEmptyShould(false);

    @ArchTest
    static final ArchRule the_domain_does_not_depend_on_the_codec =
            noClasses().that().resideInAPackage(DOMAIN)
                    .should().dependOnClassesThat().resideInAPackage(CODEC)
                    .because("the domain sees payloads through dev.queue.api.PayloadCodec only")
                    .allowEmptyShould(false);

    @ArchTest
    static final ArchRule the_domain_uses_no_database_or_json_library =
            noClasses().that().resideInAPackage(DOMAIN)
                    .should().dependOnClassesThat().resideInAnyPackage(Layers.infrastructurePackages())
                    .because("JDBC, MyBatis, Hikari, the PostgreSQL driver and Jackson belong to adapters")
                    .allowEmptyShould(false);

    @ArchTest
    static final ArchRule the_postgres_adapter_does_not_depend_on_the_in_memory_adapter =
            noClasses().that().resideInAPackage(POSTGRES)
                    .should().dependOnClassesThat().resideInAPackage(INMEMORY)
                    .because("adapters are alternatives that share only the domain")
                    .allowEmptyShould(false);

    @ArchTest
    static final ArchRule the_in_memory_adapter_does_not_depend_on_the_postgres_adapter =
            noClasses().that().resideInAPackage(INMEMORY)
                    .should().dependOnClassesThat().resideInAPackage(POSTGRES)
                    .because("adapters are alternatives that share only the domain")
                    .allowEmptyShould(false);

    @ArchTest
    static final ArchRule the_testkit_depends_on_no_adapter =
            noClasses().that().resideInAPackage(TESTKIT)
                    .should().dependOnClassesThat().resideInAnyPackage(ADAPTERS)
                    .because("the contract judges every adapter, so it may favour none")
                    .allowEmptyShould(false);

    @ArchTest
    static final ArchRule the_testkit_does_not_depend_on_the_codec =
            noClasses().that().resideInAPackage(TESTKIT)
                    .should().dependOnClassesThat().resideInAPackage(CODEC)
                    .because("the contract uses the codec the queue under test was given")
                    .allowEmptyShould(false);

    @ArchTest
    static final ArchRule the_codec_depends_only_on_the_api_java_and_jackson =
            classes().that().resideInAPackage(CODEC)
                    .should().onlyDependOnClassesThat().resideInAnyPackage(CODEC, API, "java..", JACKSON)
                    .because("the codec is a leaf: an implementation of dev.queue.api.PayloadCodec")
                    .allowEmptyShould(false);

    @ArchTest
    static final ArchRule the_micrometer_metrics_depend_only_on_the_api_java_and_micrometer =
            classes().that().resideInAPackage(MICROMETER)
                    .should().onlyDependOnClassesThat().resideInAnyPackage(MICROMETER, API, "java..", "io.micrometer..")
                    .because("metrics plug in through the interceptor SPI and Namespace.stats(), never the domain or an adapter")
                    .allowEmptyShould(false);

    @ArchTest
    static final ArchRule the_opentelemetry_tracing_depends_only_on_the_api_java_and_opentelemetry =
            classes().that().resideInAPackage(OPENTELEMETRY)
                    .should().onlyDependOnClassesThat().resideInAnyPackage(OPENTELEMETRY, API, "java..", "io.opentelemetry..")
                    .because("tracing plugs in through the interceptor SPI and message headers, never the domain or an adapter")
                    .allowEmptyShould(false);

    @ArchTest
    static final ArchRule the_spring_starter_depends_inward_on_the_api_and_the_postgres_adapter_only =
            noClasses().that().resideInAPackage(SPRING_STARTER)
                    .should().dependOnClassesThat().resideInAnyPackage(DOMAIN, INMEMORY, TESTKIT)
                    .because("modules beyond the hexagon use what applications use: the API and an adapter's public types")
                    .allowEmptyShould(false);

    @ArchTest
    static final ArchRule the_cli_depends_on_the_api_the_postgres_operator_and_picocli_only =
            classes().that().resideInAPackage(Layers.CLI)
                    .should().onlyDependOnClassesThat(DescribedPredicate.describe(
                            "the CLI, the API, PostgresOperator and its records, QueueDashboard, java (but java.sql), picocli",
                            (JavaClass type) -> type.getPackageName().startsWith("dev.queue.cli")
                                    || type.getName().startsWith("dev.queue.dashboard.QueueDashboard")
                                    || type.getPackageName().startsWith("dev.queue.api")
                                    || type.getName().startsWith("dev.queue.postgres.PostgresOperator")
                                    || (type.getPackageName().startsWith("java.") && !type.getPackageName().startsWith("java.sql"))
                                    || type.getPackageName().startsWith("picocli")))
                    .because("the CLI operates a queue through the SQL API as psql would: no domain, no adapter internals, "
                            + "no JDBC of its own")
                    .allowEmptyShould(false);

    @ArchTest
    static final ArchRule the_dashboard_depends_on_the_api_the_postgres_operator_and_the_jdk_http_server_only =
            classes().that().resideInAPackage(Layers.DASHBOARD)
                    .should().onlyDependOnClassesThat(DescribedPredicate.describe(
                            "the dashboard, the API, PostgresOperator and its records, java (but java.sql), "
                                    + "com.sun.net.httpserver",
                            (JavaClass type) -> type.getPackageName().startsWith("dev.queue.dashboard")
                                    || type.getPackageName().startsWith("dev.queue.api")
                                    || type.getName().startsWith("dev.queue.postgres.PostgresOperator")
                                    || (type.getPackageName().startsWith("java.") && !type.getPackageName().startsWith("java.sql"))
                                    || type.getPackageName().startsWith("com.sun.net.httpserver")))
                    .because("the dashboard operates a queue through the SQL API as the CLI does: no domain, no adapter "
                            + "internals, no JDBC of its own, no web framework")
                    .allowEmptyShould(false);

    @ArchTest
    static final ArchRule nothing_inside_the_hexagon_depends_on_spring =
            noClasses().that().resideInAnyPackage(Layers.HEXAGON)
                    .should().dependOnClassesThat().resideInAnyPackage(Layers.SPRING_FRAMEWORK, SPRING_STARTER)
                    .because("Spring is one way to run the queue, not a dependency of it")
                    .allowEmptyShould(false);
}
