package dev.queue.architecture;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The scanner itself: a check that cannot fail is no check. */
class SourceScannerTest {

    private static final Path FILE = Path.of("Example.java");

    @Test
    void flags_an_unused_import_with_its_line() {
        String source = """
                package dev.queue.domain;

                import java.util.List;
                import java.sql.Connection;

                class Example {}
                """;

        assertThat(SourceScanner.forbiddenPackages(FILE, source)).singleElement().satisfies(v -> {
            assertThat(v.line()).isEqualTo(4);
            assertThat(v.text()).isEqualTo("import java.sql.Connection;");
            assertThat(v.toString()).startsWith("Example.java:4: import java.sql.Connection;");
        });
    }

    @Test
    void flags_every_forbidden_package_as_import_static_import_wildcard_or_qualified_name() {
        String source = """
                import static org.postgresql.PGProperty.USER;
                import javax.sql.*;
                import org.apache.ibatis.session.SqlSession;
                class Example {
                    com.fasterxml.jackson.databind.ObjectMapper mapper;
                    Object pool = new com.zaxxer.hikari.HikariDataSource();
                    Object driver = Class.forName("org.postgresql.Driver");
                    void run(java.sql.Connection c) {}
                }
                """;

        assertThat(SourceScanner.forbiddenPackages(FILE, source)).extracting(SourceScanner.Violation::line)
                .containsExactly(1, 2, 3, 5, 6, 7, 8);
    }

    @Test
    void flags_a_module_that_requires_java_sql() {
        assertThat(SourceScanner.forbiddenPackages(FILE, "module dev.queue.domain { requires java.sql; }")).hasSize(1);
    }

    @Test
    void ignores_comments_and_look_alike_names() {
        String source = """
                // import java.sql.Connection;
                /* java.sql.Connection
                   com.zaxxer.hikari */
                /** Unlike {@link java.sql.Connection}, no JDBC here. */
                import dev.queue.java.sql.Fake;
                class Example {
                    String url = "http://x//y"; java.sqlish.Thing t; // org.postgresql
                    char quote = '"'; String s = "/* not a comment */";
                }
                """;

        assertThat(SourceScanner.forbiddenPackages(FILE, source)).isEmpty();
    }

    @Test
    void a_comment_marker_inside_a_string_does_not_hide_the_code_after_it() {
        String source = """
                class Example {
                    String s = "// looks like a comment"; java.sql.Connection c;
                }
                """;

        assertThat(SourceScanner.forbiddenPackages(FILE, source)).extracting(SourceScanner.Violation::line).containsExactly(2);
    }

    @Test
    void the_api_import_rule_accepts_java_and_the_api_and_flags_the_rest() {
        String source = """
                package dev.queue.api;
                import java.time.Duration;
                import static java.util.Objects.requireNonNull;
                import dev.queue.api.internal.Helper;
                import org.slf4j.Logger;
                import static dev.queue.domain.Rules.check;
                // import com.example.Commented;
                class Example {}
                """;

        assertThat(SourceScanner.nonJavaImports(FILE, source)).extracting(SourceScanner.Violation::line)
                .containsExactly(5, 6);
    }

    @Test
    void finds_the_repository_root_past_module_poms_that_name_it_as_parent(@TempDir Path dir, @TempDir Path elsewhere)
            throws IOException {
        Files.writeString(dir.resolve("pom.xml"), """
                <project><artifactId>queue-parent</artifactId><packaging>pom</packaging></project>
                """);
        Path module = Files.createDirectories(dir.resolve("queue-architecture"));
        String modulePom = """
                <project><parent><artifactId>queue-parent</artifactId></parent><artifactId>queue-architecture</artifactId></project>
                """;
        Files.writeString(module.resolve("pom.xml"), modulePom);
        Files.writeString(elsewhere.resolve("pom.xml"), modulePom);

        assertThat(ForbiddenImportsInSourceTest.findRepositoryRoot(Files.createDirectories(module.resolve("target/x"))))
                .isEqualTo(dir);
        assertThatThrownBy(() -> ForbiddenImportsInSourceTest.findRepositoryRoot(elsewhere))
                .isInstanceOf(AssertionError.class).hasMessageContaining("queue-parent");
    }
}
