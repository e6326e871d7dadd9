package dev.queue.example.customadapter;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;

/**
 * The example is an adapter of one's own, not a copy of a shipped one: it uses what any adapter may (the API, the
 * ports, the clocks, the composition root, the attempts rule, the codec) and no shipped adapter or domain internal.
 */
@AnalyzeClasses(packages = "dev.queue.example.customadapter", importOptions = ImportOption.DoNotIncludeTests.class)
class OneLockDependenciesTest {

    private static final DescribedPredicate<JavaClass> WHAT_ANY_ADAPTER_MAY_USE = DescribedPredicate.describe(
            "the example, the API, the ports, the clocks, QueueEngine, Lifecycle, the codec or java",
            (JavaClass type) -> type.getPackageName().startsWith("dev.queue.example.customadapter")
                    || type.getPackageName().startsWith("dev.queue.api")
                    || type.getPackageName().equals("dev.queue.domain.port")
                    || type.getPackageName().equals("dev.queue.domain.time")
                    || type.getName().startsWith("dev.queue.domain.engine.QueueEngine")
                    || type.getName().startsWith("dev.queue.domain.rules.Lifecycle")
                    || type.getPackageName().equals("dev.queue.codec.jackson")
                    || type.getPackageName().startsWith("java."));

    @ArchTest
    static final ArchRule the_adapter_uses_the_ports_and_the_root_only =
            classes().should().onlyDependOnClassesThat(WHAT_ANY_ADAPTER_MAY_USE)
                    .because("an adapter plugs into the domain's ports and builds its root (docs/custom-adapters.md)")
                    .allowEmptyShould(false);
}
