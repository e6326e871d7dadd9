package dev.queue.postgres;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** Message headers to and from the JSON object stored in the {@code headers jsonb} column. */
final class HeadersJson {

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final TypeReference<LinkedHashMap<String, String>> MAP = new TypeReference<>() {
    };

    private HeadersJson() {
    }

    static String write(Map<String, String> headers) {
        if (headers == null || headers.isEmpty()) {
            return "{}";
        }
        try {
            return MAPPER.writeValueAsString(headers);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("headers cannot be written as JSON", e);
        }
    }

    static Map<String, String> read(String json) {
        if (json == null || json.equals("{}")) {
            return Map.of();
        }
        try {
            return Collections.unmodifiableMap(MAPPER.readValue(json, MAP));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("stored headers are not a JSON object of strings: " + json, e);
        }
    }
}
