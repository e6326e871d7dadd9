package dev.queue.domain.rules;

/**
 * A strict RFC 8259 syntax check, written here because the domain takes no JSON library. It answers only
 * "is this one complete JSON value?" and, when not, where and why; it builds nothing.
 */
final class JsonSyntax {

    private final String text;
    private int pos;
    private boolean sawNulEscape;

    private JsonSyntax(String text) {
        this.text = text;
    }

    /** Null when {@code text} is one valid JSON value (surrounding white space allowed), else the problem. */
    static String problemIn(String text) {
        JsonSyntax parser = new JsonSyntax(text);
        try {
            parser.skipWhitespace();
            parser.value(0);
            parser.skipWhitespace();
            if (parser.pos != text.length()) {
                return "unexpected " + parser.describeHere() + " after the JSON value";
            }
            if (parser.sawNulEscape) {
                return "valid JSON but with a \\u0000 escape, which cannot be stored";
            }
            return null;
        } catch (Problem problem) {
            return problem.getMessage();
        }
    }

    private static final int MAX_DEPTH = 512;

    private void value(int depth) {
        if (depth > MAX_DEPTH) {
            throw new Problem("nesting deeper than " + MAX_DEPTH + " at offset " + pos);
        }
        if (pos >= text.length()) {
            throw new Problem("unexpected end of input at offset " + pos);
        }
        char c = text.charAt(pos);
        switch (c) {
            case '{' -> object(depth);
            case '[' -> array(depth);
            case '"' -> string();
            case 't' -> literal("true");
            case 'f' -> literal("false");
            case 'n' -> literal("null");
            default -> {
                if (c == '-' || (c >= '0' && c <= '9')) {
                    number();
                } else {
                    throw new Problem("unexpected " + describeHere());
                }
            }
        }
    }

    private void object(int depth) {
        pos++;
        skipWhitespace();
        if (peek() == '}') {
            pos++;
            return;
        }
        while (true) {
            skipWhitespace();
            if (peek() != '"') {
                throw new Problem("expected a quoted member name but found " + describeHere());
            }
            string();
            skipWhitespace();
            expect(':');
            skipWhitespace();
            value(depth + 1);
            skipWhitespace();
            char c = peek();
            if (c == ',') {
                pos++;
            } else if (c == '}') {
                pos++;
                return;
            } else {
                throw new Problem("expected ',' or '}' but found " + describeHere());
            }
        }
    }

    private void array(int depth) {
        pos++;
        skipWhitespace();
        if (peek() == ']') {
            pos++;
            return;
        }
        while (true) {
            skipWhitespace();
            value(depth + 1);
            skipWhitespace();
            char c = peek();
            if (c == ',') {
                pos++;
            } else if (c == ']') {
                pos++;
                return;
            } else {
                throw new Problem("expected ',' or ']' but found " + describeHere());
            }
        }
    }

    private void string() {
        pos++;
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c == '"') {
                pos++;
                return;
            }
            if (c < 0x20) {
                throw new Problem("unescaped control character U+" + String.format("%04X", (int) c) + " in a string at offset " + pos);
            }
            if (c == '\\') {
                pos++;
                char e = peek();
                switch (e) {
                    case '"', '\\', '/', 'b', 'f', 'n', 'r', 't' -> pos++;
                    case 'u' -> {
                        if (pos + 5 > text.length()) {
                            throw new Problem("truncated \\u escape at offset " + pos);
                        }
                        String hex = text.substring(pos + 1, pos + 5);
                        for (int i = 0; i < 4; i++) {
                            if (Character.digit(hex.charAt(i), 16) < 0) {
                                throw new Problem("invalid \\u escape \\u" + hex + " at offset " + pos);
                            }
                        }
                        if (hex.equals("0000")) {
                            sawNulEscape = true;
                        }
                        pos += 5;
                    }
                    default -> throw new Problem("invalid escape \\" + e + " at offset " + pos);
                }
            } else if (Character.isSurrogate(c)) {
                if (!InputRules.startsSurrogatePair(text, pos)) {
                    throw new Problem("the UTF-16 surrogate " + InputRules.codeUnit(c) + " at offset " + pos
                            + " has no pair, so the text is not valid Unicode (a \\u escape of it would be)");
                }
                pos += 2;
            } else {
                pos++;
            }
        }
        throw new Problem("unterminated string at end of input");
    }

    private void number() {
        int start = pos;
        if (peek() == '-') {
            pos++;
        }
        if (peek() == '0') {
            pos++;
        } else if (isDigit(peek())) {
            while (isDigit(peek())) {
                pos++;
            }
        } else {
            throw new Problem("invalid number at offset " + start);
        }
        if (peek() == '.') {
            pos++;
            if (!isDigit(peek())) {
                throw new Problem("invalid number at offset " + start + ": digits expected after '.'");
            }
            while (isDigit(peek())) {
                pos++;
            }
        }
        if (peek() == 'e' || peek() == 'E') {
            pos++;
            if (peek() == '+' || peek() == '-') {
                pos++;
            }
            if (!isDigit(peek())) {
                throw new Problem("invalid number at offset " + start + ": digits expected in the exponent");
            }
            while (isDigit(peek())) {
                pos++;
            }
        }
    }

    private void literal(String word) {
        if (!text.startsWith(word, pos)) {
            throw new Problem("unexpected " + describeHere());
        }
        pos += word.length();
    }

    private void expect(char c) {
        if (peek() != c) {
            throw new Problem("expected '" + c + "' but found " + describeHere());
        }
        pos++;
    }

    private char peek() {
        return pos < text.length() ? text.charAt(pos) : '\uFFFF';
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private void skipWhitespace() {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                pos++;
            } else {
                return;
            }
        }
    }

    private String describeHere() {
        if (pos >= text.length()) {
            return "end of input at offset " + pos;
        }
        char c = text.charAt(pos);
        String shown = c < 0x20 || Character.isSurrogate(c) ? InputRules.codeUnit(c) : "'" + c + "'";
        return shown + " at offset " + pos;
    }

    private static final class Problem extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Problem(String message) {
            super(message, null, false, false);
        }
    }
}
