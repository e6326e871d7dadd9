package dev.queue.postgres;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Random cron expressions for differential tests: 5 and 6 fields, in every form cron-utils reads (values, names,
 * ranges, backward ranges, steps, lists, ?, weekday#n, alternatives with |), some of its odd ones ("+5", "1-2-",
 * "*&#47;01") and some it refuses. Values lean towards the hours and minutes of clock changes.
 */
final class CronExpressions {

    private static final List<String> NOTABLE = List.of(
            "30 2 * * *", "0 2 * * *", "0 3 * * *", "*/30 * * * *", "0 0 * * *", "0 * * * *", "15,45 1-3 * * *",
            "0 0 0 * * *", "* * * * * *", "0 30 2 * * *", "59 59 1 * * *", "*/20 * 2 * * *", "0 0 */2 * * *",
            "0 0 29 2 1", "0 0 0 29 2 1", "0 0 */2 * 1", "0 0 1-7 * 1", "0 0 31 2 *", "0 0 30 2 *", "0 0 0 30 2 ?",
            "0 0 0 ? * ?", "0 0 0 ? * MON#2", "0 0 0 ? * 5#5", "0 0 12 25-5 * ?", "0 0 12 ? 10-2 *", "0 0 12 ? * FRI-MON",
            "0 0 12 25-5/2 * ?", "0 0 12 ? 11-2/2 *", "0 0 9|17 * * *", "0|30 9|17 * * *", "0 0 0 1 1 ?",
            "0 0 1 1 *", "0 12 * * SUN", "0 12 * * 7", "0 12 * * 0-7", "0 12 * * 1-7", "0 0 0 ? * 5-1/2",
            "0 0 0 1,? * ?", "0 0 0 ? * 1,?", "@daily * * * *", "0 0 * * * | 0 1 * * *", "0 0||1 * * *");

    private record Field(String name, int low, int high, String[] names) {
    }

    private static final Field SECOND = new Field("second", 0, 59, null);
    private static final Field MINUTE = new Field("minute", 0, 59, null);
    private static final Field HOUR = new Field("hour", 0, 23, null);
    private static final Field DAY_OF_MONTH = new Field("day of month", 1, 31, null);
    private static final Field MONTH = new Field("month", 1, 12,
            new String[] {"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"});
    private static final Field DAY_OF_WEEK = new Field("day of week", 0, 7,
            new String[] {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"});

    private CronExpressions() {
    }

    static String random(Random random) {
        if (random.nextInt(25) == 0) {
            return NOTABLE.get(random.nextInt(NOTABLE.size()));
        }
        boolean six = random.nextInt(3) == 0;
        List<Field> layout = six ? List.of(SECOND, MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK)
                : List.of(MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK);
        List<String> fields = new ArrayList<>();
        for (Field field : layout) {
            fields.add(field(random, field));
        }
        if (six && random.nextInt(4) != 0) {
            // mostly the usual 6-field form: ? in one of the two day fields
            fields.set(random.nextBoolean() ? 3 : 5, "?");
        }
        if (random.nextInt(30) == 0) {
            int index = random.nextInt(fields.size());
            fields.set(index, fields.get(index) + "|" + field(random, layout.get(index)));
            if (random.nextBoolean()) {
                // a second field with alternatives: the same count is read pairwise, another count is refused
                int other = random.nextInt(fields.size());
                if (other != index && !fields.get(other).contains("|")) {
                    fields.set(other, fields.get(other) + "|" + field(random, layout.get(other))
                            + (random.nextInt(4) == 0 ? "|" + field(random, layout.get(other)) : ""));
                }
            }
        }
        String expression = String.join(random.nextInt(50) == 0 ? " \t " : " ", fields);
        if (random.nextInt(50) == 0) {
            expression = expression.toLowerCase();
        }
        if (random.nextInt(50) == 0) {
            expression = "  " + expression + " ";
        }
        return expression;
    }

    private static String field(Random random, Field field) {
        boolean dayField = field == DAY_OF_MONTH || field == DAY_OF_WEEK || field == MONTH;
        int draw = random.nextInt(100);
        if (dayField && draw < 55 || field == SECOND && draw < 30) {
            // mostly unrestricted days, so that most expressions fire within the years drawn
            return "*";
        }
        if (random.nextInt(7) == 0) {
            List<String> items = new ArrayList<>();
            int count = 2 + random.nextInt(2);
            for (int i = 0; i < count; i++) {
                items.add(element(random, field));
            }
            return String.join(",", items);
        }
        return element(random, field);
    }

    private static String element(Random random, Field field) {
        int low = field.low;
        int high = field.high;
        int draw = random.nextInt(200);
        if (draw < 2) {
            return List.of("L", "5W", String.valueOf(high + 1), "*/0", low + "-", "-" + low, "x", "1#", "#2",
                    ",1", "1/", "*/", "LW", "2L", "?/2", "1-2-3", "1-5/", String.valueOf(low - 1)).get(random.nextInt(18));
        }
        return switch (draw / 10) {
            case 0, 1, 2, 3, 4 -> String.valueOf(value(random, field));
            case 5 -> field.names != null ? field.names[value(random, field) - (field == MONTH ? 1 : 0)] : String.valueOf(value(random, field));
            case 6, 7 -> {
                int a = value(random, field);
                int b = value(random, field);
                yield random.nextInt(5) == 0 ? a + "-" + b : Math.min(a, b) + "-" + Math.max(a, b);
            }
            case 8, 9 -> "*/" + (1 + random.nextInt(random.nextInt(20) == 0 ? high + 2 : Math.min(high, 12)));
            case 10 -> value(random, field) + "/" + (1 + random.nextInt(Math.min(high, 15)));
            case 11 -> {
                int a = value(random, field);
                int b = value(random, field);
                yield Math.min(a, b) + "-" + Math.max(a, b) + "/" + (1 + random.nextInt(Math.min(high, 10)));
            }
            case 12 -> field.names != null
                    ? field.names[random.nextInt(field.names.length)] + "-" + field.names[random.nextInt(field.names.length)]
                    : String.valueOf(value(random, field));
            case 13 -> field == DAY_OF_WEEK ? value(random, field) + "#" + random.nextInt(7) : String.valueOf(value(random, field));
            case 14 -> List.of("+" + value(random, field), "0" + value(random, field), "*/01", "*/1", "*/+2",
                    value(random, field) + "-" + high + "-", "/" + (1 + random.nextInt(5))).get(random.nextInt(7));
            default -> "*";
        };
    }

    private static int value(Random random, Field field) {
        if (field == HOUR && random.nextInt(5) < 2) {
            return random.nextInt(4);
        }
        if ((field == MINUTE || field == SECOND) && random.nextInt(5) < 2) {
            return List.of(0, 15, 30, 45, 59).get(random.nextInt(5));
        }
        if (field == DAY_OF_MONTH && random.nextInt(4) == 0) {
            return 28 + random.nextInt(4);
        }
        return field.low + random.nextInt(field.high - field.low + 1);
    }
}
