package dev.queue.spring;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Finds {@link QueueHandler} methods on every bean as it is initialized, and checks their parameters then, so a
 * handler that cannot be called fails the start naming it. Subscribing is left to {@link QueueHandlerSubscriptions},
 * which starts with the context, once every bean exists.
 */
final class QueueHandlerCollector implements BeanPostProcessor {

    private final List<QueueHandlerMethod> methods = new CopyOnWriteArrayList<>();

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Class<?> targetClass = AopUtils.getTargetClass(bean);
        Map<Method, QueueHandler> annotated = MethodIntrospector.selectMethods(targetClass,
                (MethodIntrospector.MetadataLookup<QueueHandler>) method ->
                        AnnotatedElementUtils.findMergedAnnotation(method, QueueHandler.class));
        annotated.forEach((method, annotation) -> methods.add(QueueHandlerMethod.of(beanName, bean,
                AopUtils.selectInvocableMethod(method, bean.getClass()), annotation)));
        return bean;
    }

    List<QueueHandlerMethod> methods() {
        return List.copyOf(methods);
    }
}
