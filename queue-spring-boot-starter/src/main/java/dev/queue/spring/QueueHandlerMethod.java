package dev.queue.spring;

import dev.queue.api.Delivery;
import dev.queue.api.MessageContext;
import dev.queue.api.MessageHandler;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

/**
 * One {@link QueueHandler} method of one bean: which parameter takes the payload, which the context, and how to
 * call it so that the handler's own exception, not reflection's wrapper, decides the retry.
 */
final class QueueHandlerMethod {

    private final String beanName;
    private final Object bean;
    private final Method method;
    private final QueueHandler annotation;
    private final Class<?> payloadType;
    private final int payloadIndex;
    private final int contextIndex;

    private QueueHandlerMethod(String beanName, Object bean, Method method, QueueHandler annotation,
                               Class<?> payloadType, int payloadIndex, int contextIndex) {
        this.beanName = beanName;
        this.bean = bean;
        this.method = method;
        this.annotation = annotation;
        this.payloadType = payloadType;
        this.payloadIndex = payloadIndex;
        this.contextIndex = contextIndex;
    }

    /**
     * @param invocable the method as it can be called on {@code bean} (a proxy's method when the bean is proxied)
     * @throws IllegalStateException naming the method when its parameters do not fit
     */
    static QueueHandlerMethod of(String beanName, Object bean, Method invocable, QueueHandler annotation) {
        Class<?>[] types = invocable.getParameterTypes();
        int payloadIndex = -1;
        int contextIndex = -1;
        for (int i = 0; i < types.length; i++) {
            if (types[i] == MessageContext.class && contextIndex < 0) {
                contextIndex = i;
            } else if (payloadIndex < 0 && !types[i].isPrimitive()) {
                payloadIndex = i;
            } else {
                throw new IllegalStateException("@QueueHandler method " + describe(beanName, invocable)
                        + " has an unexpected parameter " + i + " of type " + types[i].getName()
                        + "; expected one payload parameter (an object type) and optionally a MessageContext");
            }
        }
        if (annotation.topic().length == 0) {
            throw new IllegalStateException("@QueueHandler method " + describe(beanName, invocable)
                    + " names no topic; expected topic = \"...\"");
        }
        invocable.setAccessible(true);
        Class<?> payloadType = payloadIndex < 0 ? Delivery.class : types[payloadIndex];
        return new QueueHandlerMethod(beanName, bean, invocable, annotation, payloadType, payloadIndex, contextIndex);
    }

    QueueHandler annotation() {
        return annotation;
    }

    Class<?> payloadType() {
        return payloadType;
    }

    boolean takesDelivery() {
        return payloadType == Delivery.class;
    }

    /** {@code bean.method(Type, ...)}, for logs and errors. */
    String description() {
        return describe(beanName, method);
    }

    <T> MessageHandler<T> handler() {
        return (payload, context) -> invoke(payload, context);
    }

    private void invoke(Object payload, MessageContext context) throws Exception {
        Object[] arguments = new Object[method.getParameterCount()];
        if (payloadIndex >= 0) {
            arguments[payloadIndex] = payload;
        }
        if (contextIndex >= 0) {
            arguments[contextIndex] = context;
        }
        try {
            method.invoke(bean, arguments);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Exception exception) {
                throw exception;
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw e;
        }
    }

    private static String describe(String beanName, Method method) {
        StringBuilder text = new StringBuilder(beanName).append('.').append(method.getName()).append('(');
        Class<?>[] types = method.getParameterTypes();
        for (int i = 0; i < types.length; i++) {
            text.append(i == 0 ? "" : ", ").append(types[i].getSimpleName());
        }
        return text.append(')').toString();
    }
}
