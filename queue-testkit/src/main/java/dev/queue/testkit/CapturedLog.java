package dev.queue.testkit;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * What the process writes to standard error while it is open, where SLF4J's simple binding (the tests' logger)
 * writes every line; the output still reaches the original stream too. Closing restores the original stream.
 */
public final class CapturedLog implements AutoCloseable {

    private final PrintStream original = System.err;
    private final ByteArrayOutputStream captured = new ByteArrayOutputStream();

    private CapturedLog() {
        System.setErr(new PrintStream(new Tee(original, captured), true, StandardCharsets.UTF_8));
    }

    /**
     * Starts capturing standard error; close the result to stop.
     *
     * @return the capture
     */
    public static CapturedLog start() {
        return new CapturedLog();
    }

    /**
     * Everything written so far.
     *
     * @return the captured text, decoded as UTF-8
     */
    public String text() {
        synchronized (captured) {
            return captured.toString(StandardCharsets.UTF_8);
        }
    }

    /**
     * The lines written so far that contain the given text.
     *
     * @param text the text to look for
     * @return the matching lines, in order
     */
    public List<String> linesContaining(String text) {
        return text().lines().filter(line -> line.contains(text)).toList();
    }

    @Override
    public void close() {
        System.err.flush();
        System.setErr(original);
    }

    private static final class Tee extends OutputStream {
        private final OutputStream first;
        private final ByteArrayOutputStream second;

        Tee(OutputStream first, ByteArrayOutputStream second) {
            this.first = first;
            this.second = second;
        }

        @Override
        public void write(int b) throws IOException {
            first.write(b);
            synchronized (second) {
                second.write(b);
            }
        }

        @Override
        public void write(byte[] bytes, int offset, int length) throws IOException {
            first.write(bytes, offset, length);
            synchronized (second) {
                second.write(bytes, offset, length);
            }
        }
    }
}
