package dev.queue.inmemory;

import dev.queue.api.StoreUnavailableException;
import dev.queue.domain.engine.MaintenanceRunner;
import dev.queue.domain.engine.MaintenanceService;
import dev.queue.testkit.CapturedLog;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** What a maintenance service's failures look like in the log: one warning per failed pass, naming the service. */
class MaintenanceWarningTest {

    @Test
    void eachFailedPassWarnsNamingTheServiceAndTheRecoveryIsReported() {
        AtomicInteger passes = new AtomicInteger();
        MaintenanceService<Pass> flaky = new MaintenanceService<>() {
            @Override
            public String name() {
                return "flaky service of namespace shop";
            }

            @Override
            public Duration interval() {
                return Duration.ofHours(1);
            }

            @Override
            public Pass runOnce() {
                if (passes.incrementAndGet() <= 2) {
                    throw new StoreUnavailableException("the database refused the connection", new IllegalStateException("refused"));
                }
                return new Pass();
            }
        };
        MaintenanceRunner.Config quick = new MaintenanceRunner.Config(Duration.ZERO, Duration.ofMillis(1), Duration.ofMillis(2));
        try (CapturedLog log = CapturedLog.start(); MaintenanceRunner runner = new MaintenanceRunner(flaky, quick, null)) {
            runner.start();

            await().atMost(Duration.ofSeconds(10)).until(() -> !log.linesContaining("ran again").isEmpty());

            assertThat(log.linesContaining("WARN")).hasSize(2).allSatisfy(line -> assertThat(line)
                    .contains("flaky service of namespace shop failed", "the database refused the connection", "trying again in"));
            assertThat(log.linesContaining("WARN").get(0)).contains("(1 in a row)");
            assertThat(log.linesContaining("WARN").get(1)).contains("(2 in a row)");
            assertThat(log.linesContaining("flaky service of namespace shop ran again after 2 failed passes")).hasSize(1);
            assertThat(passes.get()).isEqualTo(3);
        }
    }

    private record Pass() implements MaintenanceService.Report {
        @Override
        public boolean batchFull() {
            return false;
        }
    }
}
