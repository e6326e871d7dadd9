package dev.queue.architecture;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The published modules agree everywhere: those that build sources and Javadoc jars are exactly those queue-bom
 * manages, each names a distinct Automatic-Module-Name of its own, and the BOM keeps the parent's version.
 */
class PublishedModulesTest {

    private static final Pattern COMMENT = Pattern.compile("(?s)<!--.*?-->");
    private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
    private static final Pattern BOM_ENTRY = Pattern.compile("<artifactId>([^<]+)</artifactId><version>\\$\\{project.version}</version>");
    private static final Pattern MODULE_NAME = Pattern.compile("<queue.module.name>([^<]+)</queue.module.name>");
    private static final Pattern JAVA_MODULE_NAME = Pattern.compile("[a-z][a-z0-9]*(\\.[a-z][a-z0-9]*)+");

    private static Path root;

    @BeforeAll
    static void locateRepositoryRoot() {
        root = ForbiddenImportsInSourceTest.findRepositoryRoot(Path.of("").toAbsolutePath());
    }

    private static String pom(String module) {
        return COMMENT.matcher(SourceScanner.read(root.resolve(module).resolve("pom.xml"))).replaceAll("");
    }

    @Test
    void the_bom_manages_exactly_the_modules_that_publish_sources_and_javadoc() {
        Set<String> published = new TreeSet<>();
        Matcher modules = MODULE.matcher(pom("."));
        while (modules.find()) {
            String module = modules.group(1);
            String pom = pom(module);
            if (pom.contains("<maven.javadoc.skip>false</maven.javadoc.skip>")) {
                assertThat(pom).as("%s publishes Javadoc, so sources too", module)
                        .contains("<maven.source.skip>false</maven.source.skip>");
                Matcher artifact = Pattern.compile("</parent>\\s*<artifactId>([^<]+)</artifactId>").matcher(pom);
                assertThat(artifact.find()).as("artifactId of %s", module).isTrue();
                published.add(artifact.group(1));
            }
        }
        Set<String> managed = new TreeSet<>();
        Matcher entries = BOM_ENTRY.matcher(pom("queue-bom"));
        while (entries.find()) {
            managed.add(entries.group(1));
        }
        assertThat(published).as("published modules").isNotEmpty().isEqualTo(managed);
    }

    @Test
    void every_module_with_a_jar_has_its_own_valid_automatic_module_name() {
        TreeMap<String, String> names = new TreeMap<>();
        Matcher modules = MODULE.matcher(pom("."));
        while (modules.find()) {
            String module = modules.group(1);
            String pom = pom(module);
            if (pom.contains("<packaging>pom</packaging>")) {
                continue;
            }
            Matcher name = MODULE_NAME.matcher(pom);
            assertThat(name.find()).as("%s sets queue.module.name", module).isTrue();
            assertThat(name.group(1)).as("module name of %s", module).matches(JAVA_MODULE_NAME);
            String other = names.put(name.group(1), module);
            assertThat(other).as("module name %s of %s already taken", name.group(1), module).isNull();
        }
    }

    @Test
    void the_bom_has_the_parents_version() {
        Pattern version = Pattern.compile("<artifactId>queue-(?:parent|bom)</artifactId>\\s*<version>([^<]+)</version>");
        Matcher parent = version.matcher(pom("."));
        Matcher bom = version.matcher(pom("queue-bom"));
        assertThat(parent.find()).isTrue();
        assertThat(bom.find()).isTrue();
        assertThat(bom.group(1)).as("queue-bom version").isEqualTo(parent.group(1));
        assertThat(Files.isRegularFile(root.resolve("LICENSE"))).as("LICENSE at the root").isTrue();
    }
}
