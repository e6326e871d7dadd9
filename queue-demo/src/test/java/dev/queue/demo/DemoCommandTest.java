package dev.queue.demo;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the demo in-process as a newcomer would, only smaller: an embedded PostgreSQL started by the command
 * (or the server named by {@code QUEUE_TEST_DATABASE_URL}, like the other PostgreSQL tests), 2,000 messages.
 */
class DemoCommandTest {

    private static final Pattern TOTAL_ROW =
            Pattern.compile("(?m)^\\s*total\\s+([\\d,]+)\\s+([\\d,]+)\\s+([\\d,]+)\\s+([\\d,]+)\\s+([\\d,]+)\\s*$");

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void a_small_run_settles_every_message_and_exits_with_0() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        DemoCommand demo = new DemoCommand();
        CommandLine command = new CommandLine(demo).setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true));

        List<String> args = new ArrayList<>(List.of("--messages", "2000", "--duration-limit", "60s", "--schema", "queue_demo_test"));
        String databaseUrl = System.getenv("QUEUE_TEST_DATABASE_URL");
        if (databaseUrl != null && !databaseUrl.isBlank()) {
            args.addAll(List.of("--database-url", databaseUrl));
        }
        int exitCode = command.execute(args.toArray(String[]::new));

        String printed = out.toString();
        assertThat(exitCode).as("exit code; printed:%n%s%nerrors:%n%s", printed, err).isZero();

        // what the summary printed: the total row is "published completed dead retries waiting"
        Matcher total = TOTAL_ROW.matcher(printed);
        assertThat(total.find()).as("a total row in the summary:%n%s", printed).isTrue();
        long published = number(total.group(1));
        long completed = number(total.group(2));
        long dead = number(total.group(3));
        long waiting = number(total.group(5));
        assertThat(published).isEqualTo(2000);
        assertThat(completed + dead).as("completed + dead").isEqualTo(published);
        assertThat(waiting).isZero();
        assertThat(printed).contains("completed + dead = ").contains(": OK");

        // and the same from the summary object, topic by topic
        Summary summary = demo.summary();
        assertThat(summary.timedOut()).isFalse();
        assertThat(summary.balanced()).isTrue();
        assertThat(summary.topics()).allSatisfy(row -> assertThat(row.completed() + row.dead())
                .as("completed + dead of %s", row.topic()).isEqualTo(row.published()));
        Summary.TopicRow webhooks = summary.topics().stream().filter(row -> row.topic().equals(Workload.WEBHOOK)).findFirst().orElseThrow();
        assertThat(webhooks.dead()).as("every webhook fails for good").isEqualTo(webhooks.published()).isPositive();
        assertThat(webhooks.retries()).as("two retries per webhook").isEqualTo(2 * webhooks.published());
        Summary.TopicRow emails = summary.topics().stream().filter(row -> row.topic().equals(Workload.EMAIL)).findFirst().orElseThrow();
        assertThat(emails.completed()).as("every e-mail succeeds").isEqualTo(emails.published()).isPositive();
        assertThat(summary.latency().count()).as("first attempts measured").isEqualTo(published);
        assertThat(summary.replicaRuns()).hasSize(2).allSatisfy(runs -> assertThat(runs).isPositive());
    }

    @Test
    void bad_options_are_refused_with_exit_code_2() {
        StringWriter err = new StringWriter();
        CommandLine command = new CommandLine(new DemoCommand()).setOut(new PrintWriter(new StringWriter(), true))
                .setErr(new PrintWriter(err, true));

        assertThat(command.execute("--messages", "0")).isEqualTo(2);
        assertThat(command.execute("--schema", "Not-A-Schema")).isEqualTo(2);
        assertThat(command.execute("--duration-limit", "soon")).isEqualTo(2);
        assertThat(err.toString()).contains("--messages must be at least 1").contains("--schema").contains("not a duration");
    }

    @Test
    void durations_read_short_and_iso_forms() {
        DurationConverter converter = new DurationConverter();
        assertThat(converter.convert("90s")).hasSeconds(90);
        assertThat(converter.convert("5m")).hasMinutes(5);
        assertThat(converter.convert("500ms")).hasMillis(500);
        assertThat(converter.convert("PT2M")).hasMinutes(2);
    }

    @Test
    void the_mix_is_65_30_5_percent() {
        long[] counts = new long[3];
        for (long i = 0; i < 20_000; i++) {
            counts[Workload.TOPICS.indexOf(Workload.topicOf(i))]++;
        }
        assertThat(counts).containsExactly(13_000, 6_000, 1_000);
    }

    @Test
    void passwords_are_masked_when_printed() {
        assertThat(DemoDatabase.mask("jdbc:postgresql://db/app?user=app&password=s3cret&ssl=true"))
                .isEqualTo("jdbc:postgresql://db/app?user=app&password=***&ssl=true");
    }

    private static long number(String text) {
        return Long.parseLong(text.replace(",", ""));
    }
}
