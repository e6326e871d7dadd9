package dev.queue.architecture;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Reads Java sources for what bytecode cannot show: javac drops an unused import, so an
 * {@code import java.sql.Connection;} that nothing uses yet is invisible to ArchUnit but is where coupling starts.
 * Comments are ignored; code and string literals are read (a class named in a string is a reflective dependency).
 */
final class SourceScanner {

    /** Packages only adapters (and the codec, for Jackson) may name. */
    static final List<String> FORBIDDEN_PACKAGES = List.of(
            "java.sql", "javax.sql", "org.apache.ibatis", "com.fasterxml.jackson", "com.zaxxer", "org.postgresql");

    private static final Pattern FORBIDDEN = Pattern.compile("(?<![\\w.$])("
            + String.join("|", FORBIDDEN_PACKAGES.stream().map(Pattern::quote).toList()) + ")(?![\\w$])");
    private static final Pattern IMPORT = Pattern.compile(
            "(?m)^[ \\t]*import\\s+(?:static\\s+)?([\\w$]+(?:\\s*\\.\\s*[\\w$*]+)*)\\s*;");

    /** One offending line. */
    record Violation(Path file, int line, String text, String reason) {
        @Override
        public String toString() {
            return file + ":" + line + ": " + text.strip() + "  <- " + reason;
        }
    }

    private SourceScanner() {
    }

    /** Every .java file under {@code root}, sorted. */
    static List<Path> javaFiles(Path root) {
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(p -> p.toString().endsWith(".java") && Files.isRegularFile(p)).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + root, e);
        }
    }

    static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }

    /** Imports and qualified names of a forbidden package, in code or string literals. */
    static List<Violation> forbiddenPackages(Path file, String source) {
        String code = withoutComments(source);
        String[] original = source.split("\n", -1);
        List<Violation> found = new ArrayList<>();
        Matcher matcher = FORBIDDEN.matcher(code);
        int lastLine = -1;
        while (matcher.find()) {
            int line = lineOf(code, matcher.start());
            if (line != lastLine) {
                found.add(new Violation(file, line, original[line - 1],
                        matcher.group(1) + " belongs to adapters, not here"));
                lastLine = line;
            }
        }
        return found;
    }

    /** Imports of anything but {@code java.} and the API itself. */
    static List<Violation> nonJavaImports(Path file, String source) {
        String code = withoutComments(source);
        String[] original = source.split("\n", -1);
        List<Violation> found = new ArrayList<>();
        Matcher matcher = IMPORT.matcher(code);
        while (matcher.find()) {
            String name = matcher.group(1).replaceAll("\\s+", "");
            if (!name.startsWith("java.") && !name.startsWith("dev.queue.api.")) {
                int line = lineOf(code, matcher.start(1));
                found.add(new Violation(file, line, original[line - 1], "the API may import only java.* (got " + name + ")"));
            }
        }
        return found;
    }

    private static int lineOf(String text, int offset) {
        int line = 1;
        for (int i = 0; i < offset; i++) {
            if (text.charAt(i) == '\n') {
                line++;
            }
        }
        return line;
    }

    /**
     * The source with every comment replaced by spaces (line breaks kept, so offsets and line numbers still match).
     * String, text block and character literals are kept as they are, and a comment marker inside one is no comment.
     */
    static String withoutComments(String source) {
        StringBuilder out = new StringBuilder(source);
        int n = source.length();
        int i = 0;
        while (i < n) {
            char c = source.charAt(i);
            char next = i + 1 < n ? source.charAt(i + 1) : '\0';
            if (c == '/' && next == '/') {
                while (i < n && source.charAt(i) != '\n') {
                    out.setCharAt(i++, ' ');
                }
            } else if (c == '/' && next == '*') {
                int end = source.indexOf("*/", i + 2);
                end = end < 0 ? n : end + 2;
                for (; i < end; i++) {
                    if (source.charAt(i) != '\n') {
                        out.setCharAt(i, ' ');
                    }
                }
            } else if (source.startsWith("\"\"\"", i)) {
                i = skipQuoted(source, i + 3, "\"\"\"");
            } else if (c == '"') {
                i = skipQuoted(source, i + 1, "\"");
            } else if (c == '\'') {
                i = skipQuoted(source, i + 1, "'");
            } else {
                i++;
            }
        }
        return out.toString();
    }

    /** The index after the closing delimiter, honouring backslash escapes. */
    private static int skipQuoted(String source, int from, String delimiter) {
        int i = from;
        while (i < source.length()) {
            if (source.charAt(i) == '\\') {
                i += 2;
            } else if (source.startsWith(delimiter, i)) {
                return i + delimiter.length();
            } else if (delimiter.length() == 1 && source.charAt(i) == '\n') {
                return i; // an unterminated literal ends at the line: javac would reject it anyway
            } else {
                i++;
            }
        }
        return i;
    }
}
