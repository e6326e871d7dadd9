package dev.queue.cli;

import java.io.PrintWriter;
import java.lang.reflect.RecordComponent;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Prints the operator's records: as aligned tables for people (times in UTC, to the second), or as JSON for
 * scripts (one document per command, field names as in the records, times in ISO-8601). Fields that already hold
 * JSON text (a warning's evidence) are embedded as JSON, not as strings.
 */
final class Output {

    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneOffset.UTC);
    private static final Set<String> RAW_JSON = Set.of("evidence", "attemptHistory", "headers");
    private static final int MAX_CELL = 60;

    private final PrintWriter out;
    private final boolean json;

    Output(PrintWriter out, boolean json) {
        this.out = out;
        this.json = json;
    }

    boolean json() {
        return json;
    }

    PrintWriter out() {
        return out;
    }

    /** Records as a table with the given columns (record component names), or as a JSON array of all fields. */
    void table(List<? extends Record> rows, String... columns) {
        if (json) {
            out.println(toJson(rows));
            out.flush();
            return;
        }
        if (rows.isEmpty()) {
            out.println("(none)");
            out.flush();
            return;
        }
        List<String[]> cells = new ArrayList<>();
        String[] header = new String[columns.length];
        for (int c = 0; c < columns.length; c++) {
            header[c] = headerOf(columns[c]);
        }
        cells.add(header);
        for (Record row : rows) {
            Map<String, Object> fields = fields(row);
            String[] line = new String[columns.length];
            for (int c = 0; c < columns.length; c++) {
                line[c] = cell(fields.get(columns[c]));
            }
            cells.add(line);
        }
        int[] widths = new int[columns.length];
        for (String[] line : cells) {
            for (int c = 0; c < line.length; c++) {
                widths[c] = Math.max(widths[c], line[c].length());
            }
        }
        for (String[] line : cells) {
            StringBuilder text = new StringBuilder();
            for (int c = 0; c < line.length; c++) {
                text.append(c == line.length - 1 ? line[c] : String.format("%-" + widths[c] + "s  ", line[c]));
            }
            out.println(text.toString().stripTrailing());
        }
        out.flush();
    }

    /** One record: "name: value" lines for the fields that are set, or a JSON object. */
    void object(Record row) {
        if (json) {
            out.println(toJson(row));
        } else {
            for (Map.Entry<String, Object> field : fields(row).entrySet()) {
                if (field.getValue() != null) {
                    out.println(headerOf(field.getKey()) + ": " + text(field.getValue()));
                }
            }
        }
        out.flush();
    }

    /** A line for people; in JSON mode nothing (the command prints its JSON result). */
    void say(String line) {
        if (!json) {
            out.println(line);
            out.flush();
        }
    }

    /** A JSON document of the command's result (a map of values), only in JSON mode. */
    void result(Map<String, ?> values) {
        if (json) {
            out.println(toJson(values));
            out.flush();
        }
    }

    static Map<String, Object> fields(Record row) {
        Map<String, Object> fields = new LinkedHashMap<>();
        for (RecordComponent component : row.getClass().getRecordComponents()) {
            try {
                fields.put(component.getName(), component.getAccessor().invoke(row));
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("cannot read " + component.getName() + " of " + row.getClass().getSimpleName(), e);
            }
        }
        return fields;
    }

    /** inFlight: IN_FLIGHT, for table headers. */
    private static String headerOf(String name) {
        return name.replaceAll("([a-z])([A-Z])", "$1_$2").toUpperCase(java.util.Locale.ROOT);
    }

    private static String cell(Object value) {
        String text = text(value);
        text = text.replace('\n', ' ').replace('\r', ' ');
        return text.length() > MAX_CELL ? text.substring(0, MAX_CELL - 3) + "..." : text;
    }

    private static String text(Object value) {
        if (value == null) {
            return "-";
        }
        if (value instanceof Instant instant) {
            return TIME.format(instant);
        }
        if (value instanceof Collection<?> list) {
            return list.isEmpty() ? "-" : String.join(",", list.stream().map(Object::toString).toList());
        }
        return value.toString();
    }

    static String toJson(Object value) {
        StringBuilder json = new StringBuilder();
        write(json, null, value);
        return json.toString();
    }

    private static void write(StringBuilder json, String name, Object value) {
        if (value == null) {
            json.append("null");
        } else if (name != null && RAW_JSON.contains(name) && value instanceof String raw) {
            json.append(raw);
        } else if (value instanceof Record record) {
            write(json, null, fields(record));
        } else if (value instanceof Map<?, ?> map) {
            json.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                if (!first) {
                    json.append(", ");
                }
                first = false;
                string(json, entry.getKey().toString());
                json.append(": ");
                write(json, entry.getKey().toString(), entry.getValue());
            }
            json.append('}');
        } else if (value instanceof Collection<?> list) {
            json.append('[');
            boolean first = true;
            for (Object item : list) {
                if (!first) {
                    json.append(", ");
                }
                first = false;
                write(json, null, item);
            }
            json.append(']');
        } else if (value instanceof Number || value instanceof Boolean) {
            json.append(value);
        } else {
            string(json, value.toString());
        }
    }

    private static void string(StringBuilder json, String text) {
        json.append('"');
        for (char c : text.toCharArray()) {
            switch (c) {
                case '"' -> json.append("\\\"");
                case '\\' -> json.append("\\\\");
                case '\n' -> json.append("\\n");
                case '\r' -> json.append("\\r");
                case '\t' -> json.append("\\t");
                default -> {
                    if (c < 0x20) {
                        json.append(String.format("\\u%04x", (int) c));
                    } else {
                        json.append(c);
                    }
                }
            }
        }
        json.append('"');
    }
}
