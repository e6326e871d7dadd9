package dev.queue.api;

/**
 * Turns payload objects into JSON text and back. The default is backed by Jackson and lives in its own
 * module, so nothing in the API or the domain depends on a JSON library.
 */
public interface PayloadCodec {

    /** @throws PayloadCodecException when the value cannot be written as JSON */
    String encode(Object payload);

    /** @throws PayloadCodecException when the JSON does not fit the requested type */
    <T> T decode(String json, Class<T> type);
}
