package dev.queue.dashboard;

import dev.queue.postgres.PostgresOperator;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;

/**
 * The last hour of messages in and out as an inline SVG: two lines over sixty one-minute slots, drawn on the
 * server, so the page needs no script and loads nothing (the dashboard's Content-Security-Policy allows neither).
 */
final class RateChart {

    static final int MINUTES = 60;
    private static final int WIDTH = 600;
    private static final int HEIGHT = 120;
    private static final int TOP = 14;

    private RateChart() {
    }

    /** Per-minute sums over the given rates, oldest first; slot {@code MINUTES - 1} is the current minute. */
    static long[][] slots(List<PostgresOperator.TopicRate> rates, Instant now) {
        long[] in = new long[MINUTES];
        long[] out = new long[MINUTES];
        Instant current = now.truncatedTo(ChronoUnit.MINUTES);
        for (PostgresOperator.TopicRate r : rates) {
            long ago = ChronoUnit.MINUTES.between(r.minute(), current);
            if (ago >= 0 && ago < MINUTES) {
                int slot = (int) (MINUTES - 1 - ago);
                in[slot] += r.published();
                out[slot] += r.completed();
            }
        }
        return new long[][] {in, out};
    }

    static String svg(String label, long[][] slots) {
        long[] in = slots[0];
        long[] out = slots[1];
        long max = 1;
        for (int i = 0; i < MINUTES; i++) {
            max = Math.max(max, Math.max(in[i], out[i]));
        }
        StringBuilder svg = new StringBuilder()
                .append("<svg class=\"rates\" role=\"img\" width=\"").append(WIDTH).append("\" height=\"").append(HEIGHT + 16)
                .append("\" viewBox=\"0 0 ").append(WIDTH).append(' ').append(HEIGHT + 16).append("\" xmlns=\"http://www.w3.org/2000/svg\">")
                .append("<title>").append(QueueDashboard.esc(label)).append("</title>")
                .append("<rect x=\"0\" y=\"").append(TOP).append("\" width=\"").append(WIDTH).append("\" height=\"").append(HEIGHT - TOP)
                .append("\" fill=\"#fafafa\" stroke=\"#ddd\"/>")
                .append(line("in", in, max, "#1f6feb")).append(line("out", out, max, "#2da44e"))
                .append("<text x=\"2\" y=\"11\" font-size=\"11\" fill=\"#555\">").append(max).append(" per minute</text>")
                .append("<text x=\"").append(WIDTH - 2).append("\" y=\"11\" font-size=\"11\" text-anchor=\"end\">")
                .append("<tspan fill=\"#1f6feb\">in</tspan> <tspan fill=\"#2da44e\">out</tspan></text>")
                .append("<text x=\"2\" y=\"").append(HEIGHT + 13).append("\" font-size=\"11\" fill=\"#555\">60 min ago</text>")
                .append("<text x=\"").append(WIDTH - 2).append("\" y=\"").append(HEIGHT + 13)
                .append("\" font-size=\"11\" fill=\"#555\" text-anchor=\"end\">now</text></svg>");
        return svg.toString();
    }

    private static String line(String name, long[] values, long max, String colour) {
        StringBuilder points = new StringBuilder();
        double step = (double) WIDTH / (MINUTES - 1);
        for (int i = 0; i < MINUTES; i++) {
            double x = i * step;
            double y = HEIGHT - (double) values[i] / max * (HEIGHT - TOP - 2) - 1;
            points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
        }
        return "<polyline class=\"" + name + "\" fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"1.5\" points=\""
                + points.toString().trim() + "\"/>";
    }
}
