package dev.queue.cli;

import dev.queue.api.InvalidInputException;
import dev.queue.api.QueueException;
import dev.queue.api.ScheduleNotFoundException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.io.PrintWriter;

/**
 * The operator's command line for a queue in PostgreSQL: {@code java -jar queue.jar <command>}. Every command reads
 * or changes the queue through the SQL API's functions (PostgresOperator), so it needs no running queue process,
 * only a connection to the database.
 */
@Command(name = "queue", mixinStandardHelpOptions = true, versionProvider = QueueCli.Version.class,
        scope = CommandLine.ScopeType.INHERIT,
        description = "Operates durable message queues in PostgreSQL: health, workers, stats, search, flow control, dead letters, "
                + "schedules.",
        subcommands = {
                Commands.Migrate.class, Commands.Status.class, Commands.Stats.class, Commands.Topics.class,
                Commands.Workers.class, Commands.Inspect.class, Commands.Find.class, Commands.Cancel.class, Commands.Dead.class,
                Commands.Schedules.class,
                Commands.Dashboard.class,
                CommandLine.HelpCommand.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
                "0:done; status: no warning",
                "1:status: warnings found; inspect: no such message; find: nothing found; cancel: nothing to cancel; "
                        + "schedules: no such schedule",
                "2:bad arguments (the message names the offending value)",
                "3:the command failed: database unreachable, schema not migrated, ..."})
public final class QueueCli implements Runnable {

    static final int WARNINGS = 1;
    static final int USAGE = 2;
    static final int FAILED = 3;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a command is required");
    }

    public static void main(String[] args) {
        System.exit(commandLine(new PrintWriter(System.out, true), new PrintWriter(System.err, true)).execute(args));
    }

    /** The command line with its exit codes and error handling, printing to the given writers. */
    static CommandLine commandLine(PrintWriter out, PrintWriter err) {
        CommandLine commandLine = new CommandLine(new QueueCli());
        commandLine.setOut(out);
        commandLine.setErr(err);
        commandLine.setExecutionExceptionHandler((e, cmd, parsed) -> {
            if (e instanceof InvalidInputException || e instanceof Target.MissingDatabase) {
                cmd.getErr().println("queue: " + e.getMessage());
                cmd.getErr().println("Try '" + cmd.getCommandSpec().qualifiedName() + " --help' for more information.");
                return USAGE;
            }
            if (e instanceof ScheduleNotFoundException) {
                cmd.getErr().println("queue: " + e.getMessage());
                return WARNINGS;
            }
            if (e instanceof QueueException) {
                cmd.getErr().println("queue: " + e.getMessage());
                return FAILED;
            }
            throw e;
        });
        return commandLine;
    }

    /** The version from the jar's manifest. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String version = QueueCli.class.getPackage().getImplementationVersion();
            return new String[] {"queue " + (version == null ? "(development build)" : version)};
        }
    }
}
