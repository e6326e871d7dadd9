package dev.queue.architecture;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

import java.util.regex.Pattern;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static dev.queue.architecture.Layers.ADAPTERS;
import static dev.queue.architecture.Layers.DOMAIN;

/**
 * How the domain is put together: {@code QueueEngine} is its composition root, and what it builds runs one way,
 * never back to it; everything outside the domain sees it through its ports, its clocks and the root alone.
 */
@AnalyzeClasses(packages = Layers.ROOT, importOptions = ImportOption.DoNotIncludeTests.class)
class CompositionRulesTest {

    private static final String ROOT_CLASS = "dev.queue.domain.engine.QueueEngine";
    private static final Pattern THE_ROOT = Pattern.compile(Pattern.quote(ROOT_CLASS) + "(\\$.*)?");
    /**
     * What adapters may use of the domain's engine package: the root, its builder, the transactional-ack hook, and the
     * shape of maintenance services with their runner (an adapter's own housekeeping runs as one).
     */
    private static final Pattern ENGINE_FACES = Pattern.compile(Pattern.quote(ROOT_CLASS) + "(\\$Builder)?"
            + "|" + Pattern.quote("dev.queue.domain.engine.CompletionAware")
            + "|" + Pattern.quote("dev.queue.domain.engine.MaintenanceService") + "(\\$Report)?"
            + "|" + Pattern.quote("dev.queue.domain.engine.MaintenanceRunner") + "(\\$Config)?");

    /** The rules adapters follow too: the attempts rule for rows, and the pause between retries of a failed call. */
    private static final Pattern RULE_FACES = Pattern.compile("dev\\.queue\\.domain\\.rules\\.(Lifecycle(\\$.*)?|RetryPause)");

    private static final DescribedPredicate<JavaClass> THE_COMPOSITION_ROOT =
            DescribedPredicate.describe("the composition root " + ROOT_CLASS, type -> THE_ROOT.matcher(type.getName()).matches());

    /**
     * The domain's types that are public only because another domain package uses them. Outside the domain, only
     * its faces may be used: the ports, the clocks, the root and its builder, the transactional-ack hook, the
     * maintenance service shape and its runner, the attempts rule of {@code Lifecycle} (which an adapter's rescue
     * follows for rows) and {@code RetryPause}.
     */
    private static final DescribedPredicate<JavaClass> DOMAIN_INTERNALS = DescribedPredicate.describe(
            "domain internals (the engine's collaborators, the input rules, the backoff and schedule planners)",
            type -> (type.getPackageName().equals("dev.queue.domain.engine") && !ENGINE_FACES.matcher(type.getName()).matches())
                    || type.getPackageName().startsWith("dev.queue.domain.schedule")
                    || (type.getPackageName().equals("dev.queue.domain.rules") && !RULE_FACES.matcher(type.getName()).matches()));

    @ArchTest
    static final ArchRule nothing_the_root_builds_leads_back_to_it =
            noClasses().that().resideInAPackage(DOMAIN).and(DescribedPredicate.not(THE_COMPOSITION_ROOT))
                    .should().dependOnClassesThat(THE_COMPOSITION_ROOT)
                    .because("the root hands each collaborator the ports it uses; a reference back would make it a hub again")
                    .allowEmptyShould(false);

    @ArchTest
    static final ArchRule nothing_outside_the_domain_reaches_its_internals =
            noClasses().that().resideOutsideOfPackage(DOMAIN)
                    .should().dependOnClassesThat(DOMAIN_INTERNALS)
                    .because("adapters, the testkit and tools implement the ports and build the root; what the root builds "
                            + "and the rules it applies are the domain's own")
                    .allowEmptyShould(false);
}
