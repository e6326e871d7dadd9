package dev.queue.architecture;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import java.util.stream.Stream;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

/**
 * A rule about a package that holds no classes proves nothing. Each package a rule of {@link HexagonRulesTest}
 * names must exist: ours must hold production classes, and each library must be on the classpath under the
 * name the rules use.
 */
class LayerPackagesTest {

    private static JavaClasses classes;

    @BeforeAll
    static void importClasses() {
        classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages(Layers.ROOT);
    }

    @TestFactory
    Stream<DynamicTest> every_package_of_ours_that_a_rule_names_holds_production_classes() {
        return Layers.OURS.stream().map(layer -> dynamicTest(layer, () ->
                assertThat(classes.that(resideInAPackage(layer)))
                        .as("production classes in %s (a rule about an empty or misspelt package passes vacuously)", layer)
                        .isNotEmpty()));
    }

    @Test
    void the_spring_framework_package_that_a_rule_forbids_exists_under_that_name() throws ClassNotFoundException {
        assertThat(Layers.SPRING_FRAMEWORK).isEqualTo("org.springframework..");
        assertThat(Class.forName("org.springframework.context.ApplicationContext", false, getClass().getClassLoader())).isNotNull();
    }

    @TestFactory
    Stream<DynamicTest> every_library_package_that_a_rule_forbids_exists_under_that_name() {
        return Layers.INFRASTRUCTURE.entrySet().stream().map(entry -> dynamicTest(entry.getKey(), () -> {
            String packagePattern = entry.getKey();
            String knownClass = entry.getValue();
            assertThat(knownClass).startsWith(packagePattern.substring(0, packagePattern.length() - 2) + ".");
            assertThat(Class.forName(knownClass, false, getClass().getClassLoader())).isNotNull();
        }));
    }
}
