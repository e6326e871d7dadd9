package dev.queue.api;

/**
 * Turns payload objects into JSON text and back. The default is backed by Jackson and lives in its own
 * module, so nothing in the API or the domain depends on a JSON library. Set another with
 * {@link QueueOptions#codec(PayloadCodec)}; implementations must be thread-safe.
 */
public interface PayloadCodec {

    /**
     * Writes a payload object as JSON text. A failure here fails the publish with {@link InvalidPayloadException}.
     *
     * @param payload the object to write; may be null
     * @return one JSON value as text
     * @throws PayloadCodecException when the value cannot be written as JSON
     */
    String encode(Object payload);

    /**
     * Reads JSON text as an object of the requested type.
     *
     * @param json the stored JSON text
     * @param type the class to read it as
     * @param <T>  the type to read it as
     * @return the decoded object
     * @throws PayloadCodecException when the JSON does not fit the requested type
     */
    <T> T decode(String json, Class<T> type);
}
