package dev.queue.bench;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;

/**
 * How much the JVM's JIT compilers are still working. On two cores they share the machine with PostgreSQL and
 * the queue: in a bulk run on the benchmark machine they compiled for about 19 s of CPU in the first 30 s, then
 * for 5-6 s more in the next minute, and were done about 100 s after the start. A minute measured while they still
 * compile is slower twice over: the compiler threads take CPU, and the code they have not yet compiled runs in
 * the interpreter or at the first tier. A warm-up that ends on a fixed second cannot know this; one that waits
 * for the compilers to go quiet measures the queue rather than the JVM's start.
 */
final class JitWatch {

    /** The compilers count as settled below this share of one core over the window. */
    static final double SETTLED_SHARE = 0.01;
    static final long WINDOW_MILLIS = 10_000;

    private final CompilationMXBean compiler = ManagementFactory.getCompilationMXBean();

    /** Whether this JVM reports its compilation time; -1 is reported where it does not. */
    boolean available() {
        return compiler != null && compiler.isCompilationTimeMonitoringSupported();
    }

    /** Milliseconds of compilation so far, -1 where the JVM does not report it. */
    long compileMillis() {
        return available() ? compiler.getTotalCompilationTime() : -1;
    }

    /** Whether {@code compileMillis} of compilation over {@code windowMillis} of wall time is below the settled share. */
    static boolean settled(long compileMillis, long windowMillis) {
        if (compileMillis < 0 || windowMillis <= 0) {
            throw new IllegalArgumentException("compile milliseconds must be 0 or more and window milliseconds above 0, got "
                    + compileMillis + " and " + windowMillis);
        }
        return compileMillis < SETTLED_SHARE * windowMillis;
    }
}
