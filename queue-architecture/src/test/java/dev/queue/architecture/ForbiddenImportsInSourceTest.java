package dev.queue.architecture;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The source-level half of the rules: javac erases an unused {@code import java.sql.Connection;}, so the bytecode
 * rules of {@link HexagonRulesTest} cannot see it. This reads every source file of queue-domain and queue-api and
 * fails naming file and line.
 */
class ForbiddenImportsInSourceTest {

    private static final Pattern PARENT_BLOCK = Pattern.compile("(?s)<parent>.*?</parent>");
    private static final Pattern COMMENT = Pattern.compile("(?s)<!--.*?-->");

    private static Path repositoryRoot;

    @BeforeAll
    static void locateRepositoryRoot() {
        repositoryRoot = findRepositoryRoot(Path.of("").toAbsolutePath());
    }

    /**
     * Walks up to the directory whose own pom.xml is {@code queue-parent}. Every module's pom names queue-parent
     * in its {@code <parent>} block, so that block is ignored.
     */
    static Path findRepositoryRoot(Path start) {
        for (Path dir = start; dir != null; dir = dir.getParent()) {
            Path pom = dir.resolve("pom.xml");
            if (Files.isRegularFile(pom)) {
                String own = PARENT_BLOCK.matcher(COMMENT.matcher(SourceScanner.read(pom)).replaceAll("")).replaceAll("");
                if (own.contains("<artifactId>queue-parent</artifactId>")) {
                    return dir;
                }
            }
        }
        throw new AssertionError("no pom.xml with <artifactId>queue-parent</artifactId> in " + start + " or above");
    }

    @Test
    void the_domain_sources_name_no_database_or_json_library() {
        assertClean("queue-domain/src/main/java", false);
    }

    @Test
    void the_api_sources_name_no_database_or_json_library_and_import_only_java() {
        assertClean("queue-api/src/main/java", true);
    }

    private static void assertClean(String relativeRoot, boolean onlyJavaImports) {
        Path root = repositoryRoot.resolve(relativeRoot);
        assertThat(root).as("source directory of the rule").isDirectory();
        List<Path> files = SourceScanner.javaFiles(root);
        assertThat(files).as("Java sources under %s (a scan of nothing proves nothing)", root).isNotEmpty();

        List<SourceScanner.Violation> violations = new ArrayList<>();
        for (Path file : files) {
            String source = SourceScanner.read(file);
            Path shown = repositoryRoot.relativize(file);
            violations.addAll(SourceScanner.forbiddenPackages(shown, source));
            if (onlyJavaImports) {
                violations.addAll(SourceScanner.nonJavaImports(shown, source));
            }
        }
        if (!violations.isEmpty()) {
            fail(violations.size() + " forbidden reference(s) in " + relativeRoot + ":\n" + violations.stream()
                    .map(v -> "  " + v).collect(Collectors.joining("\n")));
        }
    }
}
