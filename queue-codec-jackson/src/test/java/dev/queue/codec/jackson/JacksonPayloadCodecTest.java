package dev.queue.codec.jackson;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.queue.api.PayloadCodecException;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class JacksonPayloadCodecTest {

    record OrderPaid(long orderId, String customer, List<String> items, Instant paidAt) {
    }

    record Strict(int count) {
    }

    /** Jackson cannot serialise this: no properties and FAIL_ON_EMPTY_BEANS is on. */
    static final class Opaque {
    }

    private final JacksonPayloadCodec codec = new JacksonPayloadCodec();

    @Test
    void roundTripsARecord() {
        OrderPaid order = new OrderPaid(42, "ada", List.of("book", "pen"), Instant.parse("2024-05-01T10:15:30.123456Z"));

        String json = codec.encode(order);

        assertThat(json).contains("\"orderId\":42").contains("\"paidAt\":\"2024-05-01T10:15:30.123456Z\"");
        assertThat(codec.decode(json, OrderPaid.class)).isEqualTo(order);
    }

    @Test
    void roundTripsAMap() {
        Map<String, Object> map = Map.of("user", 42, "name", "ada", "tags", List.of("a", "b"), "nested", Map.of("ok", true));

        String json = codec.encode(map);

        Map<?, ?> decoded = codec.decode(json, Map.class);
        assertThat(decoded).isEqualTo(map);
    }

    @Test
    void writesAnInstantAsIsoTextAndReadsItBack() {
        Instant instant = Instant.parse("2030-01-02T03:04:05.000006Z");

        String json = codec.encode(instant);

        assertThat(json).isEqualTo("\"2030-01-02T03:04:05.000006Z\"");
        assertThat(codec.decode(json, Instant.class)).isEqualTo(instant);
    }

    @Test
    void encodesAStringAsAJsonString() {
        assertThat(codec.encode("hello \"world\"")).isEqualTo("\"hello \\\"world\\\"\"");
        assertThat(codec.decode("\"hello\"", String.class)).isEqualTo("hello");
    }

    @Test
    void ignoresUnknownPropertiesByDefault() {
        assertThat(codec.decode("{\"count\":3,\"addedLater\":true}", Strict.class)).isEqualTo(new Strict(3));
    }

    @Test
    void aDecodeFailureNamesTheTypeAndTheCause() {
        assertThatThrownBy(() -> codec.decode("{\"count\":\"not a number\"}", Strict.class))
                .isInstanceOf(PayloadCodecException.class)
                .hasMessageContaining(Strict.class.getName())
                .hasMessageContaining("not a number")
                .hasCauseInstanceOf(com.fasterxml.jackson.core.JsonProcessingException.class);
    }

    @Test
    void malformedJsonIsADecodeFailure() {
        assertThatThrownBy(() -> codec.decode("{\"count\":", Strict.class))
                .isInstanceOf(PayloadCodecException.class)
                .hasMessageContaining(Strict.class.getName())
                .hasCauseInstanceOf(com.fasterxml.jackson.core.JsonProcessingException.class);
    }

    @Test
    void anEncodeFailureNamesTheTypeAndTheCause() {
        assertThatThrownBy(() -> codec.encode(new Opaque()))
                .isInstanceOf(PayloadCodecException.class)
                .hasMessageContaining(Opaque.class.getName())
                .hasMessageContaining("InvalidDefinitionException")
                .hasCauseInstanceOf(com.fasterxml.jackson.core.JsonProcessingException.class);
    }

    @Test
    void usesTheMapperItIsGiven() {
        JacksonPayloadCodec strict = new JacksonPayloadCodec(new ObjectMapper());

        assertThat(strict.objectMapper()).isNotSameAs(codec.objectMapper());
        assertThatThrownBy(() -> strict.decode("{\"count\":3,\"addedLater\":true}", Strict.class))
                .isInstanceOf(PayloadCodecException.class)
                .hasMessageContaining("addedLater");
    }
}
