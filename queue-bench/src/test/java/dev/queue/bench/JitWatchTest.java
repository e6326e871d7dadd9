package dev.queue.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class JitWatchTest {

    @Test
    void compilersAreSettledBelowOnePercentOfACore() {
        assertTrue(JitWatch.settled(0, 10_000));
        assertTrue(JitWatch.settled(99, 10_000));
        assertFalse(JitWatch.settled(100, 10_000));
        // the bench's own first minute: 5-6 s of compilation in 60 s
        assertFalse(JitWatch.settled(5_500, 60_000));
    }

    @Test
    void negativeFiguresAreRefusedWithTheValues() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> JitWatch.settled(-1, 10_000));
        assertTrue(e.getMessage().contains("-1"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> JitWatch.settled(5, 0));
    }

    @Test
    void thisJvmReportsItsCompilationTime() {
        JitWatch watch = new JitWatch();
        assertTrue(watch.available(), "HotSpot reports compilation time; the warm-up relies on it");
        assertTrue(watch.compileMillis() >= 0);
    }
}
