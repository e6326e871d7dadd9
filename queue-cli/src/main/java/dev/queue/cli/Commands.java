package dev.queue.cli;

import dev.queue.api.InvalidInputException;
import dev.queue.dashboard.QueueDashboard;
import dev.queue.postgres.PostgresOperator;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/** The commands of {@link QueueCli}, one class each. */
final class Commands {

    private Commands() {
    }

    /** What every command has: the shared options, and the output they choose. */
    abstract static class Base implements Callable<Integer> {

        @Mixin
        Target target;

        @Spec
        CommandLine.Model.CommandSpec spec;

        Output output() {
            return new Output(spec.commandLine().getOut(), target.json);
        }

        @Override
        public final Integer call() {
            return run(target.operator(), output());
        }

        abstract int run(PostgresOperator operator, Output output);
    }

    /** Who a change is recorded as: the option, else the operating system's user. */
    abstract static class Change extends Base {

        @Option(names = "--actor", paramLabel = "NAME", defaultValue = "${sys:user.name}",
                description = "who the change is recorded as (default: the OS user, ${DEFAULT-VALUE})")
        String actor;
    }

    @Command(name = "migrate", description = "Brings the schema to the latest version (what a starting queue does).")
    static final class Migrate extends Base {
        @Override
        int run(PostgresOperator operator, Output output) {
            List<String> applied = operator.migrate();
            output.say(applied.isEmpty() ? "schema " + operator.schema() + " is up to date"
                    : "schema " + operator.schema() + ": applied migrations " + applied);
            output.result(Map.of("schema", operator.schema(), "applied", applied));
            return 0;
        }
    }

    @Command(name = "status", description = {"Health warnings, each with its evidence and what to do.",
            "Exit code 1 when there is any: usable as a monitoring check."})
    static final class Status extends Base {

        @Option(names = "--all-namespaces", description = "check every namespace, not only --namespace")
        boolean allNamespaces;

        @Override
        int run(PostgresOperator operator, Output output) {
            List<PostgresOperator.Warning> warnings = operator.health(allNamespaces ? null : target.namespace);
            if (output.json()) {
                output.table(warnings);
            } else if (warnings.isEmpty()) {
                output.say("healthy: no warnings" + (allNamespaces ? "" : " for namespace " + target.namespace));
            } else {
                for (PostgresOperator.Warning warning : warnings) {
                    output.say("WARNING " + warning.code() + (warning.topic() == null ? "" : " (" + warning.namespace() + "/" + warning.topic() + ")"));
                    output.say("  " + warning.message());
                    output.say("  evidence: " + warning.evidence());
                    output.say("  to do: " + warning.advice());
                }
            }
            return warnings.isEmpty() ? 0 : QueueCli.WARNINGS;
        }
    }

    @Command(name = "stats", description = {"The namespace's message counts: the sums of its topics'.",
            "Counts past 1000 per topic are the planner's estimates (EXACT: false): nothing counts the whole hot table."})
    static final class Stats extends Base {
        @Override
        int run(PostgresOperator operator, Output output) {
            PostgresOperator.Stats stats = operator.stats(target.namespace);
            output.object(stats);
            return 0;
        }
    }

    @Command(name = "topics", description = {"Per topic: message counts, whether it is paused, the oldest due message and how many "
            + "live workers subscribe it.",
            "Counts past 1000 are the planner's estimates (EXACT: false): nothing counts the whole hot table.",
            "With pause or resume: stops or restarts the claims of one topic. With limit or limits: sets, clears or "
                    + "lists the topics' concurrency and rate limits.",
            "With ordering: shows or sets what the messages of an ordering key do behind a dead letter."},
            subcommands = {TopicPause.class, TopicResume.class, TopicLimit.class, TopicLimits.class, TopicOrdering.class})
    static final class Topics extends Base {

        /** A topic's line: its counts and whether it is paused. */
        record TopicLine(String topic, long pending, long running, long completed, long dead, long total, int liveSubscribers,
                         boolean exact, boolean paused, java.time.Instant oldestDueAt) {
        }

        @Override
        int run(PostgresOperator operator, Output output) {
            java.util.Set<String> paused = new java.util.HashSet<>();
            operator.pausedTopics(target.namespace).forEach(p -> paused.add(p.topic()));
            List<TopicLine> lines = operator.topics(target.namespace).stream()
                    .map(t -> new TopicLine(t.topic(), t.pending(), t.running(), t.completed(), t.dead(), t.total(), t.liveSubscribers(),
                            t.exact(), paused.contains(t.topic()), t.oldestDueAt()))
                    .toList();
            output.table(lines, "topic", "pending", "running", "completed", "dead", "total", "liveSubscribers", "exact", "paused",
                    "oldestDueAt");
            return 0;
        }
    }

    abstract static class TopicChange extends Change {
        @Parameters(paramLabel = "TOPIC", description = "the topic")
        String topic;
    }

    @Command(name = "pause", description = {"Stops the topic: once this returns no claim starts a message of it, in any process.",
            "Running messages finish; publishing goes on. Recorded with the actor."})
    static final class TopicPause extends TopicChange {
        @Override
        int run(PostgresOperator operator, Output output) {
            boolean changed = operator.pauseTopic(target.namespace, topic, actor);
            output.say(changed ? "paused topic " + topic + " as " + actor : "topic " + topic + " was already paused");
            output.result(Map.of("topic", topic, "changed", changed, "actor", actor));
            return 0;
        }
    }

    @Command(name = "resume", description = "Lets claims of the topic go on and wakes its subscribers. Recorded with the actor.")
    static final class TopicResume extends TopicChange {
        @Override
        int run(PostgresOperator operator, Output output) {
            boolean changed = operator.resumeTopic(target.namespace, topic, actor);
            output.say(changed ? "resumed topic " + topic + " as " + actor : "topic " + topic + " was not paused");
            output.result(Map.of("topic", topic, "changed", changed, "actor", actor));
            return 0;
        }
    }

    @Command(name = "limit", description = {"Sets the topic's limits for the whole fleet, replacing any it had, or clears "
            + "them with --clear. Claims that begin afterwards respect them; running messages count and finish.",
            "Recorded with the actor. See docs/flow-control.md, Limits."})
    static final class TopicLimit extends TopicChange {
        @Option(names = "--max-running", paramLabel = "N", description = "at most N messages of the topic running at once")
        Integer maxRunning;

        @Option(names = "--partition-header", paramLabel = "NAME",
                description = "the header whose value is a message's partition (for the per-partition limits)")
        String partitionHeader;

        @Option(names = "--partition-ordering-key", description = "a message's ordering key is its partition (for the "
                + "per-partition limits; messages without a key share one), instead of a header")
        boolean partitionOrderingKey;

        @Option(names = "--max-running-per-partition", paramLabel = "N", description = "at most N running per partition")
        Integer maxRunningPerPartition;

        @Option(names = "--rate", paramLabel = "N/PERIOD",
                description = "at most N starts per PERIOD (ms, s, m, h or d after a number), e.g. 10/1s")
        String rate;

        @Option(names = "--partition-rate", paramLabel = "N/PERIOD", description = "at most N starts per PERIOD per partition")
        String partitionRate;

        @Option(names = "--clear", description = "removes every limit of the topic")
        boolean clear;

        @Override
        int run(PostgresOperator operator, Output output) {
            boolean changed;
            if (clear) {
                if (maxRunning != null || partitionHeader != null || partitionOrderingKey || maxRunningPerPartition != null
                        || rate != null || partitionRate != null) {
                    throw new dev.queue.api.InvalidInputException("--clear", "with limits", "--clear alone");
                }
                changed = operator.clearTopicLimits(target.namespace, topic, actor);
                output.say(changed ? "cleared the limits of topic " + topic + " as " + actor : "topic " + topic + " had no limits");
            } else {
                if (partitionOrderingKey && partitionHeader != null) {
                    throw new dev.queue.api.InvalidInputException("--partition-header", partitionHeader,
                            "no header with --partition-ordering-key");
                }
                Rate topicRate = Rate.parse("--rate", rate);
                Rate perPartition = Rate.parse("--partition-rate", partitionRate);
                changed = operator.setTopicLimits(target.namespace, new PostgresOperator.TopicLimitsLine(topic, maxRunning,
                        partitionOrderingKey ? "ordering_key" : null, partitionHeader, maxRunningPerPartition, topicRate == null ? null : topicRate.starts(),
                        topicRate == null ? null : topicRate.period(), perPartition == null ? null : perPartition.starts(),
                        perPartition == null ? null : perPartition.period(), null, null), actor);
                output.say(changed ? "set the limits of topic " + topic + " as " + actor
                        : "topic " + topic + " had these limits already");
            }
            output.result(Map.of("topic", topic, "changed", changed, "actor", actor));
            return 0;
        }

        /** N starts per period, from {@code N/PERIOD}. */
        record Rate(int starts, java.time.Duration period) {
            private static final java.util.regex.Pattern FORM =
                    java.util.regex.Pattern.compile("(\\d{1,9})/(\\d{1,9})(ms|s|m|h|d)");

            static Rate parse(String option, String text) {
                if (text == null) {
                    return null;
                }
                java.util.regex.Matcher match = FORM.matcher(text.trim());
                if (!match.matches()) {
                    throw new dev.queue.api.InvalidInputException(option, text, "N/PERIOD, such as 10/1s or 100/5m");
                }
                long amount = Long.parseLong(match.group(2));
                java.time.Duration period = switch (match.group(3)) {
                    case "ms" -> java.time.Duration.ofMillis(amount);
                    case "s" -> java.time.Duration.ofSeconds(amount);
                    case "m" -> java.time.Duration.ofMinutes(amount);
                    case "h" -> java.time.Duration.ofHours(amount);
                    default -> java.time.Duration.ofDays(amount);
                };
                return new Rate(Integer.parseInt(match.group(1)), period);
            }
        }
    }

    @Command(name = "limits", description = "The limited topics of the namespace and their limits.")
    static final class TopicLimits extends Base {
        @Override
        int run(PostgresOperator operator, Output output) {
            output.table(operator.topicLimits(target.namespace), "topic", "maxRunning", "partitionKind", "partitionHeader",
                    "maxRunningPerPartition", "rateLimit", "ratePeriod", "partitionRateLimit", "partitionRatePeriod", "setAt",
                    "setBy");
            return 0;
        }
    }

    @Command(name = "ordering", description = {"Shows, or with wait or continue sets, what the later messages of an ordering "
            + "key of the topic do while an earlier one is a dead letter: wait (the default) until it is redriven or "
            + "purged, or continue. Setting it is recorded with the actor."})
    static final class TopicOrdering extends Change {
        @Parameters(index = "0", paramLabel = "TOPIC", description = "the topic")
        String topic;

        @Parameters(index = "1", paramLabel = "CHOICE", arity = "0..1", description = "wait or continue")
        String choice;

        @Override
        int run(PostgresOperator operator, Output output) {
            if (choice == null) {
                String current = operator.topicOrdering(target.namespace, topic);
                output.say("topic " + topic + ": behind a dead letter its ordering keys " + current);
                output.result(Map.of("topic", topic, "behindDeadLetter", current));
                return 0;
            }
            boolean changed = operator.setTopicOrdering(target.namespace, topic, choice, actor);
            output.say(changed ? "topic " + topic + ": behind a dead letter its ordering keys " + choice + " now, as " + actor
                    : "topic " + topic + ": its ordering keys " + choice + " behind a dead letter already");
            output.result(Map.of("topic", topic, "behindDeadLetter", choice, "changed", changed, "actor", actor));
            return 0;
        }
    }

    @Command(name = "cancel", description = {"Takes a pending or running message out of the queue: it does not run (again).",
            "A running one's handler is told to stop; its result no longer counts. Exit code 1 when the namespace has no "
                    + "pending or running message ID."})
    static final class Cancel extends Change {

        @Parameters(paramLabel = "ID", description = "the message id")
        long id;

        @Override
        int run(PostgresOperator operator, Output output) {
            boolean cancelled = operator.cancel(target.namespace, id, actor);
            output.say(cancelled ? "cancelled message " + id + " as " + actor
                    : "no pending or running message " + id + " in namespace " + target.namespace + ": nothing cancelled");
            output.result(Map.of("id", id, "cancelled", cancelled, "actor", actor));
            return cancelled ? 0 : QueueCli.WARNINGS;
        }
    }

    @Command(name = "find", description = {"Finds messages by unique key, or by header within a window of one topic.",
            "--unique-key: the live message holding it, and the dead letters and archived messages that had it, in every topic "
                    + "(or --topic); one index probe per topic.",
            "--header NAME[=VALUE]: headers have no index, so only the next --window pending messages of --topic in claim "
                    + "order, its running ones, and its newest --window dead letters and archived messages are searched."})
    static final class Find extends Base {

        /** What to look for: exactly one. */
        static final class By {
            @Option(names = "--unique-key", paramLabel = "KEY", required = true, description = "the unique key")
            String uniqueKey;

            @Option(names = "--header", paramLabel = "NAME[=VALUE]", required = true,
                    description = "a header, with any value or with this one (needs --topic)")
            String header;
        }

        @ArgGroup(exclusive = true, multiplicity = "1")
        By by;

        @Option(names = "--topic", paramLabel = "TOPIC", description = "only this topic (required with --header)")
        String topic;

        @Option(names = "--window", paramLabel = "N", defaultValue = "1000",
                description = "messages per state a header search reads, 1 to 10000 (default: ${DEFAULT-VALUE})")
        int window;

        @Option(names = "--limit", paramLabel = "N", defaultValue = "50", description = "matches shown at most, 1 to 1000 (default: ${DEFAULT-VALUE})")
        int limit;

        @Override
        int run(PostgresOperator operator, Output output) {
            List<PostgresOperator.FoundMessage> found;
            if (by.uniqueKey != null) {
                found = operator.findByUniqueKey(target.namespace, topic, by.uniqueKey, limit);
            } else {
                if (topic == null) {
                    throw new InvalidInputException("topic", null, "a topic with --header: a header search reads a window of one topic");
                }
                int eq = by.header.indexOf('=');
                found = operator.findByHeader(target.namespace, topic, eq < 0 ? by.header : by.header.substring(0, eq),
                        eq < 0 ? null : by.header.substring(eq + 1), window, limit);
                output.say("searched topic " + topic + ": the next " + window + " pending messages in claim order, up to " + window
                        + " running, the newest " + window + " dead letters and archived messages");
            }
            output.table(found, "id", "topic", "state", "uniqueKey", "headers", "attempts", "publishedAt", "finishedAt", "lastError");
            return found.isEmpty() ? QueueCli.WARNINGS : 0;
        }
    }

    @Command(name = "workers", description = "The queue processes that heartbeat: alive ones first, then gone ones.")
    static final class Workers extends Base {

        @Option(names = "--all-namespaces", description = "every worker, not only those subscribing --namespace")
        boolean allNamespaces;

        @Override
        int run(PostgresOperator operator, Output output) {
            output.table(operator.workers(allNamespaces ? null : target.namespace), "id", "host", "pid", "status", "listener", "topics",
                    "concurrency", "inFlight", "heartbeatAt", "startedAt", "version");
            return 0;
        }
    }

    @Command(name = "dashboard", description = {"Serves the web dashboard until interrupted (Ctrl-C).",
            "Read-only unless a write token is given; writes are recorded as --actor from the browser's address."})
    static final class Dashboard extends Change {

        @Option(names = "--port", paramLabel = "PORT", defaultValue = "8080", description = "the port to listen on (default: ${DEFAULT-VALUE})")
        int port;

        @Option(names = "--address", paramLabel = "ADDRESS", defaultValue = "127.0.0.1",
                description = "the address to listen on: 127.0.0.1 serves this host only, * or 0.0.0.0 every address "
                        + "(default: ${DEFAULT-VALUE})")
        String address;

        @Option(names = "--namespaces", paramLabel = "NAMESPACE", split = ",",
                description = "the namespaces the overview lists, comma-separated (default: --namespace)")
        List<String> namespaces;

        @Option(names = "--write-token", paramLabel = "TOKEN", defaultValue = "${QUEUE_DASHBOARD_TOKEN}",
                description = "enables writes for requests carrying it, 16 characters or more "
                        + "(default: the variable QUEUE_DASHBOARD_TOKEN; none: read-only)")
        String writeToken;

        @Override
        int run(PostgresOperator operator, Output output) {
            QueueDashboard dashboard = QueueDashboard.builder(operator)
                    .namespaces(namespaces == null ? List.of(target.namespace) : namespaces)
                    .writeToken(writeToken == null || writeToken.isEmpty() ? null : writeToken)
                    .actor(actor)
                    .build();
            try (QueueDashboard.Server server = dashboard.start(address, port)) {
                String host = address.equals("*") || address.equals("0.0.0.0") ? "localhost" : address.contains(":") ? "[" + address + "]" : address;
                output.say("dashboard on http://" + host + ":" + server.port() + "/ ("
                        + (writeToken == null || writeToken.isEmpty() ? "read-only" : "writes need the token") + ")");
                // serves on the server's threads; this one only waits to be interrupted
                new java.util.concurrent.CountDownLatch(1).await();
                return 0;
            } catch (java.io.IOException e) {
                throw new InvalidInputException("port", port, "a free port (" + e.getMessage() + ")");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return 0;
            }
        }
    }

    @Command(name = "inspect", aliases = "explain", description = {"Why a message did not run (or did): a verdict, then the facts.",
            "Exit code 1 when the namespace has no such message."})
    static final class Inspect extends Base {

        @Parameters(paramLabel = "ID", description = "the message id")
        long id;

        @Override
        int run(PostgresOperator operator, Output output) {
            PostgresOperator.Explanation explanation = operator.explain(target.namespace, id);
            output.object(explanation);
            return "unknown".equals(explanation.state()) ? QueueCli.WARNINGS : 0;
        }
    }

    @Command(name = "dead", description = "Dead letters: list, redrive, purge.",
            subcommands = {DeadList.class, DeadRedrive.class, DeadPurge.class})
    static final class Dead implements Runnable {
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public void run() {
            throw new CommandLine.ParameterException(spec.commandLine(), "a subcommand is required: list, redrive or purge");
        }
    }

    @Command(name = "list", description = "One page of dead letters, oldest first.")
    static final class DeadList extends Base {

        @Option(names = "--topic", paramLabel = "TOPIC", description = "only this topic")
        String topic;

        @Option(names = "--after-id", paramLabel = "ID", defaultValue = "0", description = "the page after this id (the last of the previous page)")
        long afterId;

        @Option(names = "--limit", paramLabel = "N", defaultValue = "50", description = "rows per page, 1 to 1000 (default: ${DEFAULT-VALUE})")
        int limit;

        @Override
        int run(PostgresOperator operator, Output output) {
            List<PostgresOperator.DeadLetter> page = operator.deadLetters(target.namespace, topic, afterId, limit);
            output.table(page, "id", "topic", "attempts", "maxAttempts", "failedAt", "failedBy", "lastError");
            if (page.size() == limit) {
                output.say("next page: --after-id " + page.get(page.size() - 1).id());
            }
            return 0;
        }
    }

    /** Which dead letters: ids, a topic, or the whole namespace when asked for explicitly. */
    static final class Selection {

        @Parameters(paramLabel = "ID", arity = "1..*", description = "dead letter ids")
        List<Long> ids;

        @Option(names = "--topic", paramLabel = "TOPIC", required = true, description = "every dead letter of this topic")
        String topic;

        @Option(names = "--all", required = true, description = "every dead letter of the namespace")
        boolean all;
    }

    abstract static class DeadChange extends Change {

        @ArgGroup(exclusive = true, multiplicity = "1")
        Selection selection;

        @Option(names = "--dry-run", description = "only count the dead letters the command would take")
        boolean dryRun;

        @Option(names = "--batch-size", paramLabel = "N", defaultValue = "1000",
                description = "dead letters per transaction, 1 to 10000 (default: ${DEFAULT-VALUE})")
        int batchSize;

        String described() {
            return selection.ids != null ? selection.ids.size() + " given ids" : selection.topic != null ? "topic " + selection.topic : "all topics";
        }

        /** The count first: a dry run stops there. */
        boolean countFirst(PostgresOperator operator, Output output, String verb) {
            long count = operator.countDeadLetters(target.namespace, selection.topic, selection.ids);
            output.say((dryRun ? "would " + verb + " " : "found ") + count + " dead letters in namespace " + target.namespace
                    + " (" + described() + ")");
            if (dryRun) {
                output.result(Map.of("dryRun", true, "count", count));
            }
            return dryRun;
        }
    }

    @Command(name = "redrive", description = {"Moves dead letters back to pending, due now, attempts from zero.",
            "By ids, by --topic, or --all; in bounded transactions, recorded with the actor."})
    static final class DeadRedrive extends DeadChange {
        @Override
        int run(PostgresOperator operator, Output output) {
            if (countFirst(operator, output, "redrive")) {
                return 0;
            }
            PostgresOperator.Redriven done = operator.redriveDeadLetters(target.namespace, selection.topic, selection.ids, batchSize, actor);
            output.say("redrove " + done.redriven() + " of " + done.examined() + " dead letters as " + actor
                    + (done.redriven() < done.examined() ? " (the others stay dead: a live message holds their unique key)" : ""));
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("redriven", done.redriven());
            result.put("examined", done.examined());
            result.put("actor", actor);
            output.result(result);
            return 0;
        }
    }

    @Command(name = "purge", description = {"Deletes dead letters for good.",
            "By ids, by --topic, or --all; in bounded transactions, recorded with the actor in the audit log."})
    static final class DeadPurge extends DeadChange {
        @Override
        int run(PostgresOperator operator, Output output) {
            if (countFirst(operator, output, "purge")) {
                return 0;
            }
            long purged = operator.purgeDeadLetters(target.namespace, selection.topic, selection.ids, batchSize, actor);
            output.say("purged " + purged + " dead letters as " + actor);
            output.result(Map.of("purged", purged, "actor", actor));
            return 0;
        }
    }

    @Command(name = "schedules", description = "Schedules: list, pause, resume, run-now.",
            subcommands = {SchedulesList.class, SchedulePause.class, ScheduleResume.class, ScheduleRunNow.class})
    static final class Schedules implements Runnable {
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public void run() {
            throw new CommandLine.ParameterException(spec.commandLine(), "a subcommand is required: list, pause, resume or run-now");
        }
    }

    @Command(name = "list", description = "The namespace's schedules, by name.")
    static final class SchedulesList extends Base {
        @Override
        int run(PostgresOperator operator, Output output) {
            output.table(operator.schedules(target.namespace), "name", "topic", "cron", "every", "timeZone", "paused", "nextRunAt", "lastRunAt");
            return 0;
        }
    }

    abstract static class ScheduleChange extends Change {
        @Parameters(paramLabel = "NAME", description = "the schedule's name")
        String name;
    }

    @Command(name = "pause", description = "Keeps the schedule but fires nothing until resumed.")
    static final class SchedulePause extends ScheduleChange {
        @Override
        int run(PostgresOperator operator, Output output) {
            boolean changed = operator.pauseSchedule(target.namespace, name, actor);
            output.say(changed ? "paused " + name : name + " was already paused");
            output.result(Map.of("schedule", name, "changed", changed));
            return 0;
        }
    }

    @Command(name = "resume", description = "Fires again from the next due time after now.")
    static final class ScheduleResume extends ScheduleChange {
        @Override
        int run(PostgresOperator operator, Output output) {
            boolean changed = operator.resumeSchedule(target.namespace, name, actor);
            output.say(changed ? "resumed " + name : name + " was not paused");
            output.result(Map.of("schedule", name, "changed", changed));
            return 0;
        }
    }

    @Command(name = "run-now", description = "Publishes the schedule's message once now; its timetable is unchanged.")
    static final class ScheduleRunNow extends ScheduleChange {
        @Override
        int run(PostgresOperator operator, Output output) {
            Long id = operator.runScheduleNow(target.namespace, name, actor);
            output.say(id == null ? "not published: a live message of " + name + " holds this firing's key" : "published message " + id);
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("schedule", name);
            result.put("id", id);
            output.result(result);
            return 0;
        }
    }
}
