package dev.queue.domain.rules;

import dev.queue.api.Backoff;
import dev.queue.api.InvalidInputException;
import dev.queue.api.InvalidNameException;
import dev.queue.api.InvalidPayloadException;
import dev.queue.api.QueueOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class InputRulesTest {

    private final InputRules rules = new InputRules(QueueOptions.defaults().maxPayloadBytes(1024));

    @ParameterizedTest
    @ValueSource(strings = {"a", "order.paid", "A-1_b.c", "0"})
    void acceptsWellFormedNames(String name) {
        assertThatCode(() -> rules.topic(name)).doesNotThrowAnyException();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", ".hidden", "-x", "a b", "ns/1", "caf\u00e9", "tab\t"})
    void rejectsMalformedNamesNamingTheValue(String name) {
        assertThatThrownBy(() -> rules.namespace(name)).isInstanceOf(InvalidNameException.class)
                .hasMessageContaining("namespace").hasMessageContaining("got: \"" + name.replace("\t", "\t"));
    }

    @Test
    void rejectsNamesLongerThanSixtyFourCharacters() {
        assertThatCode(() -> rules.topic("t".repeat(64))).doesNotThrowAnyException();
        assertThatThrownBy(() -> rules.topic("t".repeat(65))).isInstanceOf(InvalidNameException.class);
    }

    @Test
    void rejectsPayloadsOverTheLimitNamingTheSize() {
        String big = "\"" + "x".repeat(1023) + "\"";
        assertThatThrownBy(() -> rules.payloadJson(big)).isInstanceOf(InvalidPayloadException.class)
                .hasMessageContaining("1025 bytes").hasMessageContaining("1024");
    }

    @Test
    void countsPayloadSizeInUtf8Bytes() {
        String accented = "\"" + "\u00e9".repeat(512) + "\"";
        assertThatThrownBy(() -> rules.payloadJson(accented)).hasMessageContaining("1026 bytes");
        String fits = "\"" + "\u00e9".repeat(511) + "\"";
        assertThatCode(() -> rules.payloadJson(fits)).doesNotThrowAnyException();
    }

    @Test
    void rejectsInvalidJsonSayingWhy() {
        assertThatThrownBy(() -> rules.payloadJson("{'a':1}")).isInstanceOf(InvalidPayloadException.class)
                .hasMessageContaining("{'a':1}").hasMessageContaining("offset 1");
    }

    @Test
    void checksNumericRanges() {
        assertThatThrownBy(() -> rules.priority(10)).hasMessageContaining("priority").hasMessageContaining("10");
        assertThatThrownBy(() -> rules.priority(-1)).hasMessageContaining("-1");
        assertThatThrownBy(() -> rules.maxAttempts(0)).hasMessageContaining("maxAttempts");
        assertThatThrownBy(() -> rules.limit(1001)).hasMessageContaining("1001");
        assertThatThrownBy(() -> rules.concurrency(0)).hasMessageContaining("concurrency");
        assertThatThrownBy(() -> rules.delay("delay", Duration.ofSeconds(-1))).hasMessageContaining("PT-1S");
        assertThatThrownBy(() -> rules.lease("visibility", Duration.ofMillis(999))).hasMessageContaining("visibility");
        assertThatThrownBy(() -> rules.lease("visibility", Duration.ofHours(25))).hasMessageContaining("PT25H");
    }

    @Test
    void checksHeaders() {
        Map<String, String> many = new HashMap<>();
        for (int i = 0; i < 33; i++) {
            many.put("h" + i, "v");
        }
        assertThatThrownBy(() -> rules.headers(many)).isInstanceOf(InvalidInputException.class).hasMessageContaining("33");
        assertThatThrownBy(() -> rules.headers(Map.of("bad name", "v"))).isInstanceOf(InvalidNameException.class);
        assertThatThrownBy(() -> rules.headers(Map.of("ok", "nul\u0000"))).hasMessageContaining("header ok");
    }

    @Test
    void checksUniqueKeys() {
        assertThatCode(() -> rules.uniqueKey(null)).doesNotThrowAnyException();
        assertThatThrownBy(() -> rules.uniqueKey("")).hasMessageContaining("uniqueKey");
        assertThatThrownBy(() -> rules.uniqueKey("k".repeat(256))).hasMessageContaining("uniqueKey");
        assertThatThrownBy(() -> rules.uniqueKey("a\nb")).hasMessageContaining("a\\nb");
    }

    @Test
    void makesErrorTextsStorable() {
        assertThat(InputRules.errorText(null)).isEqualTo("no reason given");
        assertThat(InputRules.errorText("a\u0000b")).isEqualTo("a\uFFFDb");
        assertThat(InputRules.errorText("e".repeat(9000))).hasSize(InputRules.MAX_ERROR_LENGTH).endsWith("...(cut)");
    }

    @Test
    void rejectsImpossibleOptionsNamingTheOption() {
        assertThatThrownBy(() -> rules.checkOptions(QueueOptions.defaults().defaultMaxAttempts(0)))
                .hasMessageContaining("defaultMaxAttempts");
        assertThatThrownBy(() -> rules.checkOptions(QueueOptions.defaults().sweepInterval(Duration.ZERO)))
                .hasMessageContaining("sweepInterval");
        assertThatThrownBy(() -> rules.checkOptions(QueueOptions.defaults()
                .defaultBackoff(Backoff.exponential(Duration.ofSeconds(10), Duration.ofSeconds(1)))))
                .hasMessageContaining("defaultBackoff");
        assertThatThrownBy(() -> rules.checkOptions(QueueOptions.defaults().backoff("t", Backoff.DEFAULT.jitter(2))))
                .hasMessageContaining("jitter");
    }

    @Test
    void theHandWrittenNameCheckAgreesWithTheNamePattern() {
        String alphabet = "aZ09._-/ é\u0000:+";
        java.util.Random random = new java.util.Random(42);
        java.util.List<String> samples = new java.util.ArrayList<>(java.util.List.of("", "a", "-a", ".a", "_a", "a-", "a.b_c-d",
                "x".repeat(64), "x".repeat(65), "Z9"));
        for (int i = 0; i < 20_000; i++) {
            int length = random.nextInt(70);
            StringBuilder name = new StringBuilder();
            for (int j = 0; j < length; j++) {
                name.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            samples.add(name.toString());
        }
        for (String sample : samples) {
            assertThat(InputRules.isName(sample)).as("name %s", sample).isEqualTo(InputRules.NAME.matcher(sample).matches());
        }
        assertThat(InputRules.isName(null)).isFalse();
    }
}
