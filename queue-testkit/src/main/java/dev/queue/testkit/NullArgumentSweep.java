package dev.queue.testkit;

import dev.queue.api.QueueException;

import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Calls every public constructor and method of the given classes with {@code null} in one reference parameter at a
 * time, the others filled with sample values, and lists each call that failed with anything but one of the queue's
 * own exceptions (a bare {@link NullPointerException}, typically). A call that accepts the null is fine: the value
 * means "unset" there, and a later check names it.
 *
 * <p>Samples are given per type; a parameter type without one fails the sweep, so a new type cannot be skipped by
 * accident. For instance methods, the sample of the declaring type (or of {@link #instances}) is the receiver.
 */
public final class NullArgumentSweep {

    private final Map<Class<?>, Function<Type, Object>> samples = new LinkedHashMap<>();
    private final Map<Class<?>, Supplier<?>> instances = new LinkedHashMap<>();
    private final List<String> missingSamples = new ArrayList<>();

    /**
     * A value for every parameter of this type (a fresh one per call).
     *
     * @param type  the parameter type
     * @param value supplies a non-null value of it
     * @param <T>   the parameter type
     * @return this sweep
     */
    public <T> NullArgumentSweep sample(Class<T> type, Supplier<? extends T> value) {
        samples.put(type, generic -> value.get());
        return this;
    }

    /**
     * A value for parameters of this type, chosen by the parameter's generic type (for example a list's element).
     *
     * @param type  the parameter's raw type
     * @param value makes a non-null value from the parameter's generic type
     * @return this sweep
     */
    public NullArgumentSweep sampleByGenericType(Class<?> type, Function<Type, Object> value) {
        samples.put(type, value);
        return this;
    }

    /**
     * The receiver of instance methods of {@code type}, when it is not also a parameter sample.
     *
     * @param type  the declaring type
     * @param value supplies an instance of it
     * @param <T>   the declaring type
     * @return this sweep
     */
    public <T> NullArgumentSweep instance(Class<T> type, Supplier<? extends T> value) {
        instances.put(type, value);
        return this;
    }

    /**
     * Every call of the classes' public members with one null argument that did not end in a queue exception.
     *
     * @param classes the classes whose public constructors and methods are called
     * @return one line per failed call, led by the parameter types that had no sample; empty when all passed
     */
    public List<String> failuresIn(List<Class<?>> classes) {
        List<String> failures = new ArrayList<>();
        for (Class<?> type : classes) {
            for (Executable member : publicMembers(type)) {
                sweep(type, member, failures);
            }
        }
        if (!missingSamples.isEmpty()) {
            failures.add(0, "no sample value for parameter types " + missingSamples.stream().distinct().toList());
        }
        return failures;
    }

    private static List<Executable> publicMembers(Class<?> type) {
        List<Executable> members = new ArrayList<>();
        if (!Modifier.isAbstract(type.getModifiers())) {
            members.addAll(Arrays.asList(type.getConstructors()));
        }
        for (Method method : type.getMethods()) {
            if (!method.getDeclaringClass().getName().startsWith("java.") && !method.isSynthetic() && !method.isBridge()
                    && !isJdkContract(type, method)) {
                members.add(method);
            }
        }
        members.sort(Comparator.comparing(Executable::toGenericString));
        return members;
    }

    /**
     * Members whose answer to null the JDK defines: {@code equals(null)} is false, {@code compareTo(null)} throws
     * NullPointerException (as {@link Comparable} requires), and an enum's {@code valueOf(null)} does too.
     */
    private static boolean isJdkContract(Class<?> type, Method method) {
        String name = method.getName();
        return (name.equals("equals") && method.getParameterCount() == 1)
                || (name.equals("compareTo") && Comparable.class.isAssignableFrom(type))
                || (type.isEnum() && name.equals("valueOf"));
    }

    private void sweep(Class<?> type, Executable member, List<String> failures) {
        Class<?>[] parameters = member.getParameterTypes();
        Type[] generics = member.getGenericParameterTypes();
        for (int nullAt = 0; nullAt < parameters.length; nullAt++) {
            if (parameters[nullAt].isPrimitive()) {
                continue;
            }
            Object[] args = new Object[parameters.length];
            boolean complete = true;
            for (int i = 0; i < parameters.length; i++) {
                if (i == nullAt) {
                    continue;
                }
                Function<Type, Object> sample = sampleFor(parameters[i]);
                if (sample == null) {
                    missingSamples.add(parameters[i].getName() + " (in " + member.toGenericString() + ")");
                    complete = false;
                    break;
                }
                args[i] = sample.apply(generics[i]);
            }
            if (!complete) {
                return;
            }
            Object receiver = null;
            if (member instanceof Method method && !Modifier.isStatic(method.getModifiers())) {
                receiver = receiverOf(type);
                if (receiver == null) {
                    missingSamples.add(type.getName() + " (receiver of " + member.toGenericString() + ")");
                    return;
                }
            }
            Throwable thrown = invoke(member, receiver, args);
            if (thrown != null && !(thrown instanceof QueueException)) {
                failures.add(type.getSimpleName() + ": " + member.toGenericString() + " with null as argument " + (nullAt + 1)
                        + " threw " + thrown);
            }
            if (receiver instanceof AutoCloseable closeable) {
                closeQuietly(closeable);
            }
        }
    }

    private Object receiverOf(Class<?> type) {
        Supplier<?> instance = instances.get(type);
        if (instance != null) {
            return instance.get();
        }
        Function<Type, Object> sample = samples.get(type);
        return sample == null ? null : sample.apply(type);
    }

    private Function<Type, Object> sampleFor(Class<?> type) {
        if (type == int.class || type == long.class || type == short.class || type == byte.class) {
            return generic -> primitiveOne(type);
        }
        if (type == double.class || type == float.class) {
            return generic -> type == double.class ? (Object) 1.0 : (Object) 1.0f;
        }
        if (type == boolean.class) {
            return generic -> false;
        }
        if (type.isEnum()) {
            return generic -> type.getEnumConstants()[0];
        }
        if (type.isArray() && sampleFor(type.getComponentType()) != null) {
            Function<Type, Object> element = sampleFor(type.getComponentType());
            return generic -> {
                Object array = java.lang.reflect.Array.newInstance(type.getComponentType(), 1);
                java.lang.reflect.Array.set(array, 0, element.apply(type.getComponentType()));
                return array;
            };
        }
        return samples.get(type);
    }

    private static Object primitiveOne(Class<?> type) {
        if (type == int.class) {
            return 1;
        }
        if (type == long.class) {
            return 1L;
        }
        return type == short.class ? (Object) (short) 1 : (Object) (byte) 1;
    }

    private static Throwable invoke(Executable member, Object receiver, Object[] args) {
        try {
            Object result = member instanceof Constructor<?> constructor
                    ? constructor.newInstance(args)
                    : ((Method) member).invoke(receiver, args);
            if (result instanceof AutoCloseable closeable) {
                closeQuietly(closeable);
            }
            return null;
        } catch (InvocationTargetException e) {
            return e.getCause();
        } catch (ReflectiveOperationException | IllegalArgumentException e) {
            return e;
        }
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception ignored) {
            // The sweep looks at the call with a null argument; how a sample closes is not under test.
        }
    }

    /**
     * The first type argument of a parameterized parameter type, for {@link #sampleByGenericType}.
     *
     * @param generic a parameter's generic type
     * @return its first type argument; null when it is not parameterized
     */
    public static Type elementType(Type generic) {
        return generic instanceof ParameterizedType parameterized ? parameterized.getActualTypeArguments()[0] : null;
    }
}
