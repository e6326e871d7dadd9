package dev.queue.domain.rules;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

class JsonSyntaxTest {

    @ParameterizedTest
    @ValueSource(strings = {"{}", "[]", "0", "-0.5e+10", "\"text\"", "true", "false", "null", " {\"a\" : [1, 2.5, {\"b\": null}]} ",
            "{\"esc\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\"}", "[[[[[]]]]]", "1E3", "\"\u00e9\u4e2d\uD83D\uDE00\""})
    void acceptsValidJson(String json) {
        assertThat(JsonSyntax.problemIn(json)).isNull();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "{", "}", "{'a':1}", "NaN", "{} x", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "+1", "tru",
            "\"unterminated", "\"bad \\x escape\"", "\"\\u12G4\"", "{\"a\" 1}", "[1 2]", "undefined", "\"tab\there\""})
    void rejectsInvalidJson(String json) {
        assertThat(JsonSyntax.problemIn(json)).isNotNull();
    }

    @org.junit.jupiter.api.Test
    void rejectsNulEscapeBecauseItCannotBeStored() {
        assertThat(JsonSyntax.problemIn("{\"a\":\"x\\u0000y\"}")).contains("\\u0000");
    }

    @org.junit.jupiter.api.Test
    void rejectsNestingDeeperThanTheLimitWithoutOverflowingTheStack() {
        String deep = "[".repeat(100_000) + "]".repeat(100_000);
        assertThat(JsonSyntax.problemIn(deep)).contains("nesting");
    }

    @org.junit.jupiter.api.Test
    void namesTheOffsetOfTheProblem() {
        assertThat(JsonSyntax.problemIn("{\"a\":1} x")).contains("offset 8");
    }
}
