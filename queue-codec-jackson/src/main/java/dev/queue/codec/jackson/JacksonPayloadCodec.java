package dev.queue.codec.jackson;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import dev.queue.api.PayloadCodec;
import dev.queue.api.PayloadCodecException;

import java.io.IOException;
import java.util.Objects;

/**
 * The default {@link PayloadCodec}: payload objects to JSON text and back with Jackson. The no-argument
 * constructor writes {@code java.time} values as ISO-8601 text and ignores unknown properties when reading, so
 * a consumer keeps working when a producer adds a field. A {@link String} payload is encoded as a JSON string
 * (use {@code Message.json(...)} to publish JSON text as it is). Thread-safe.
 */
public final class JacksonPayloadCodec implements PayloadCodec {

    private final ObjectMapper mapper;

    /** Java time support, dates as ISO-8601 text, unknown properties ignored. */
    public JacksonPayloadCodec() {
        this(defaultMapper());
    }

    /**
     * Uses the given mapper as it is configured; it must not be reconfigured afterwards.
     *
     * @param mapper the mapper to encode and decode with
     * @throws NullPointerException when {@code mapper} is null
     */
    public JacksonPayloadCodec(ObjectMapper mapper) {
        this.mapper = Objects.requireNonNull(mapper, "mapper");
    }

    /**
     * The mapper the no-argument constructor uses, for applications that want to start from it.
     *
     * @return a new mapper with Java time support, dates as ISO-8601 text and unknown properties ignored
     */
    public static ObjectMapper defaultMapper() {
        return new ObjectMapper()
                .registerModule(new JavaTimeModule())
                .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
                .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
    }

    /**
     * The mapper in use.
     *
     * @return the mapper; not to be reconfigured
     */
    public ObjectMapper objectMapper() {
        return mapper;
    }

    @Override
    public String encode(Object payload) {
        try {
            return mapper.writeValueAsString(payload);
        } catch (JsonProcessingException | RuntimeException e) {
            throw new PayloadCodecException("cannot encode a payload of type " + typeName(payload) + " as JSON: "
                    + describe(e), e);
        }
    }

    @Override
    public <T> T decode(String json, Class<T> type) {
        if (type == null) {
            throw new PayloadCodecException("cannot decode JSON: no target type given (null)", null);
        }
        if (json == null) {
            throw new PayloadCodecException("cannot decode JSON as " + type.getName() + ": the JSON text is null", null);
        }
        try {
            return mapper.readValue(json, type);
        } catch (IOException | RuntimeException e) {
            throw new PayloadCodecException("cannot decode JSON as " + type.getName() + ": " + describe(e), e);
        }
    }

    private static String typeName(Object payload) {
        return payload == null ? "null" : payload.getClass().getName();
    }

    private static String describe(Exception e) {
        String message = e instanceof JsonProcessingException jpe ? jpe.getOriginalMessage() : e.getMessage();
        return e.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }

    @Override
    public String toString() {
        return "JacksonPayloadCodec";
    }
}
