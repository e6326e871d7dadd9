package dev.queue.postgres;

import org.apache.ibatis.reflection.ReflectionException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CachingObjectFactoryTest {

    private final MyBatisSupport.CachingObjectFactory factory = new MyBatisSupport.CachingObjectFactory();

    record Row(long id, String topic) {
        Row {
            if (id < 0) {
                throw new IllegalArgumentException("id must not be negative, got " + id);
            }
        }
    }

    @Test
    void resultListsAreNewModifiableLists() {
        List<?> first = factory.create(List.class);
        Collection<?> second = factory.create(Collection.class);

        assertThat(first).isInstanceOf(ArrayList.class).isEmpty();
        assertThat(second).isInstanceOf(ArrayList.class).isNotSameAs(first);
    }

    @Test
    void rowsAreBuiltThroughTheSameConstructorEachTime() {
        List<Class<?>> types = List.of(long.class, String.class);

        Row first = factory.create(Row.class, types, List.of(1L, "emails"));
        Row second = factory.create(Row.class, types, List.of(2L, "orders"));

        assertThat(first).isEqualTo(new Row(1L, "emails"));
        assertThat(second).isEqualTo(new Row(2L, "orders"));
    }

    @Test
    void aConstructorThatRefusesItsArgumentsFailsWithMyBatisWording() {
        assertThatThrownBy(() -> factory.create(Row.class, List.of(long.class, String.class), List.of(-1L, "emails")))
                .isInstanceOf(ReflectionException.class)
                .hasMessageContaining("Row")
                .hasMessageContaining("-1");
    }

    @Test
    void aMissingConstructorFailsWithMyBatisWording() {
        assertThatThrownBy(() -> factory.create(Row.class, List.of(String.class), List.of("emails")))
                .isInstanceOf(ReflectionException.class)
                .hasMessageContaining("Row")
                .hasMessageContaining("String");
    }
}
