package dev.queue.domain.schedule;

import com.cronutils.model.Cron;
import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;
import dev.queue.api.InvalidInputException;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.Optional;

/**
 * The due times of one schedule definition, computed from the definition alone (never from when a tick
 * happened), so a late tick does not shift a schedule. Bounded by the optional start and end.
 */
public abstract class DueTimes {

    private static final CronParser UNIX = new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.UNIX));
    private static final CronParser WITH_SECONDS = new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.SPRING));
    private static final Duration ONE_MICRO = Duration.ofNanos(1000);
    private static final ZonedDateTime PROBE = ZonedDateTime.of(2000, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC);

    final Instant startAt;
    final Instant endAt;

    private DueTimes(Instant startAt, Instant endAt) {
        this.startAt = startAt;
        this.endAt = endAt;
    }

    /** Parses a cron expression: 5 fields (Unix) or 6 with seconds first; anything else is rejected, saying why. */
    public static DueTimes cron(String expression, ZoneId zone, Instant startAt, Instant endAt) {
        return new CronTimes(parse(expression), zone, startAt, endAt);
    }

    /** Due at {@code anchor + k * interval} for k from {@code firstK}. */
    public static DueTimes interval(Instant anchor, Duration interval, int firstK, Instant startAt, Instant endAt) {
        return new IntervalTimes(anchor, interval, firstK, startAt, endAt);
    }

    static Cron parse(String expression) {
        if (expression == null || expression.isBlank()) {
            throw new InvalidInputException("cron", expression, "a cron expression of 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first)");
        }
        String[] fields = expression.trim().split("\\s+");
        CronParser parser;
        if (fields.length == 5) {
            parser = UNIX;
        } else if (fields.length == 6) {
            parser = WITH_SECONDS;
        } else {
            throw new InvalidInputException("cron", expression, "5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first), but it has "
                    + fields.length);
        }
        try {
            Cron cron = parser.parse(expression.trim());
            cron.validate();
            // cron-utils accepts some expressions it cannot evaluate (a range with an empty step, a backward month
            // range with a step, '?' in a list) and only fails, with its own exceptions, when asked for a time.
            ExecutionTime.forCron(cron).nextExecution(PROBE);
            return cron;
        } catch (RuntimeException e) {
            throw new InvalidInputException("cron", expression, "a valid " + fields.length + "-field cron expression (" + (e.getMessage() != null ? e.getMessage() : e.toString()) + ")");
        }
    }

    /**
     * The first due time of the definition within its bounds (from the start, or from 1970 without one), or null
     * when it has none: a cron such as {@code 0 0 31 2 *} (February 31st), or bounds that no due time falls between.
     */
    public final Instant firstEver() {
        return firstAfter(startAt != null ? startAt.minus(ONE_MICRO) : Instant.EPOCH);
    }

    /** The first due time strictly after {@code t}, or null when none remains before the end. */
    public final Instant firstAfter(Instant t) {
        Instant from = t;
        if (startAt != null && from.isBefore(startAt)) {
            from = startAt.minus(ONE_MICRO);
        }
        Instant next = rawFirstAfter(from);
        if (next == null || (endAt != null && next.isAfter(endAt))) {
            return null;
        }
        return next;
    }

    /** The latest due time at or before {@code t} (not before the start), or null. */
    public final Instant latestAtOrBefore(Instant t) {
        Instant to = t;
        if (endAt != null && to.isAfter(endAt)) {
            to = endAt;
        }
        Instant latest = rawLatestAtOrBefore(to);
        if (latest == null || (startAt != null && latest.isBefore(startAt))) {
            return null;
        }
        return latest;
    }

    abstract Instant rawFirstAfter(Instant t);

    abstract Instant rawLatestAtOrBefore(Instant t);

    private static final class CronTimes extends DueTimes {
        private final ExecutionTime execution;
        private final ZoneId zone;

        CronTimes(Cron cron, ZoneId zone, Instant startAt, Instant endAt) {
            super(startAt, endAt);
            this.execution = ExecutionTime.forCron(cron);
            this.zone = zone;
        }

        @Override
        Instant rawFirstAfter(Instant t) {
            Optional<ZonedDateTime> next = execution.nextExecution(ZonedDateTime.ofInstant(t, zone));
            return next.map(z -> z.toInstant().truncatedTo(ChronoUnit.MICROS)).orElse(null);
        }

        @Override
        Instant rawLatestAtOrBefore(Instant t) {
            // lastExecution is strictly before its argument; cron resolution is a second, so a microsecond later includes t.
            Optional<ZonedDateTime> last = execution.lastExecution(ZonedDateTime.ofInstant(t.plus(ONE_MICRO), zone));
            return last.map(z -> z.toInstant().truncatedTo(ChronoUnit.MICROS)).orElse(null);
        }
    }

    private static final class IntervalTimes extends DueTimes {
        private final Instant anchor;
        private final long periodMicros;
        private final long firstK;

        IntervalTimes(Instant anchor, Duration interval, int firstK, Instant startAt, Instant endAt) {
            super(startAt, endAt);
            this.anchor = anchor.truncatedTo(ChronoUnit.MICROS);
            this.periodMicros = interval.toNanos() / 1000;
            this.firstK = firstK;
        }

        private Instant at(long k) {
            return anchor.plus(Math.multiplyExact(k, periodMicros), ChronoUnit.MICROS);
        }

        @Override
        Instant rawFirstAfter(Instant t) {
            long elapsed = ChronoUnit.MICROS.between(anchor, t);
            long k = elapsed < 0 ? firstK : Math.max(firstK, Math.floorDiv(elapsed, periodMicros) + 1);
            return at(k);
        }

        @Override
        Instant rawLatestAtOrBefore(Instant t) {
            long elapsed = ChronoUnit.MICROS.between(anchor, t);
            long k = Math.floorDiv(elapsed, periodMicros);
            return k < firstK ? null : at(k);
        }
    }
}
