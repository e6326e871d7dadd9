package dev.queue.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Draws the per-second CSV of the end-to-end runner ({@code --timeseries}) as an SVG: throughput on top, latency
 * p50 and p99 below, against seconds. SVG is text, so the plot lives in the repository next to the figures.
 * Usage: {@code java -cp queue-bench.jar dev.queue.bench.PlotTimeseries run.csv plot.svg "title"}.
 */
public final class PlotTimeseries {

    private static final int WIDTH = 900;
    private static final int PANEL = 260;
    private static final int LEFT = 70;
    private static final int TOP = 40;
    private static final int GAP = 60;

    private PlotTimeseries() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 2) {
            System.err.println("usage: PlotTimeseries <timeseries.csv> <out.svg> [title]");
            System.exit(2);
        }
        List<double[]> rows = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of(args[0]))) {
            if (line.isBlank() || line.startsWith("second")) {
                continue;
            }
            String[] f = line.split(",");
            // Files written before the steal column have five columns.
            double steal = f.length > 5 ? Double.parseDouble(f[5]) : -1;
            rows.add(new double[] {Double.parseDouble(f[0]), Double.parseDouble(f[1]), Double.parseDouble(f[3]), Double.parseDouble(f[4]), steal});
        }
        String title = args.length > 2 ? args[2] : args[0];
        Files.writeString(Path.of(args[1]), svg(rows, title));
    }

    static String svg(List<double[]> rows, String title) {
        double maxX = rows.stream().mapToDouble(r -> r[0]).max().orElse(1);
        double maxThroughput = nice(rows.stream().mapToDouble(r -> r[1]).max().orElse(1));
        double maxLatency = nice(rows.stream().mapToDouble(r -> r[3]).max().orElse(1));
        boolean withSteal = rows.stream().anyMatch(r -> r[4] >= 0);
        double maxSteal = nice(Math.max(10, rows.stream().mapToDouble(r -> r[4]).max().orElse(0)));
        int plotWidth = WIDTH - LEFT - 30;
        StringBuilder s = new StringBuilder();
        int height = TOP + PANEL * (withSteal ? 3 : 2) + GAP * (withSteal ? 2 : 1) + 50;
        s.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">%n", WIDTH, height));
        s.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"22\" font-size=\"15\">%s</text>%n", LEFT, escape(title)));
        panel(s, rows, 1, TOP, maxX, maxThroughput, plotWidth, "handled messages per second", "#1f77b4", null, 0);
        panel(s, rows, 2, TOP + PANEL + GAP, maxX, maxLatency, plotWidth, "latency, publish commit to handler start (ms): p50 blue, p99 red",
                "#1f77b4", "#d62728", 3);
        if (withSteal) {
            panel(s, rows, 4, TOP + 2 * (PANEL + GAP), maxX, maxSteal, plotWidth, "CPU time stolen by the host (%)", "#7f7f7f", null, 0);
        }
        s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">seconds</text>%n", LEFT + plotWidth / 2, height - 10));
        s.append("</svg>\n");
        return s.toString();
    }

    private static void panel(StringBuilder s, List<double[]> rows, int column, int top, double maxX, double maxY, int plotWidth,
                              String label, String color, String secondColor, int secondColumn) {
        s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">%s</text>%n", LEFT, top - 8, escape(label)));
        s.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888\"/>%n", LEFT, top, plotWidth, PANEL));
        for (int i = 0; i <= 4; i++) {
            double value = maxY * i / 4;
            int y = top + PANEL - (int) (PANEL * i / 4.0);
            s.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#eee\"/>%n", LEFT, y, LEFT + plotWidth, y));
            s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>%n", LEFT - 6, y + 4, format(value)));
        }
        for (int i = 0; i <= 5; i++) {
            double value = maxX * i / 5;
            int x = LEFT + (int) (plotWidth * i / 5.0);
            s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>%n", x, top + PANEL + 16, format(value)));
        }
        s.append(polyline(rows, column, top, maxX, maxY, plotWidth, color));
        if (secondColor != null) {
            s.append(polyline(rows, secondColumn, top, maxX, maxY, plotWidth, secondColor));
        }
    }

    private static String polyline(List<double[]> rows, int column, int top, double maxX, double maxY, int plotWidth, String color) {
        StringBuilder points = new StringBuilder();
        for (double[] r : rows) {
            double x = LEFT + plotWidth * r[0] / maxX;
            double y = top + PANEL - PANEL * Math.min(r[column], maxY) / maxY;
            points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
        }
        return String.format(Locale.ROOT, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"%s\"/>%n", color, points.toString().trim());
    }

    private static double nice(double max) {
        if (max <= 0) {
            return 1;
        }
        double magnitude = Math.pow(10, Math.floor(Math.log10(max)));
        for (double step : new double[] {1, 2, 2.5, 5, 10}) {
            if (step * magnitude >= max) {
                return step * magnitude;
            }
        }
        return 10 * magnitude;
    }

    private static String format(double value) {
        return value >= 100 || value == Math.rint(value) ? String.format(Locale.ROOT, "%.0f", value) : String.format(Locale.ROOT, "%.2f", value);
    }

    private static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
