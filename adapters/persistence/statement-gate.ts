/**
 * The repository with each method waiting for `ready` (when it answers a promise) before it runs: how a unit of work
 * sends its BEGIN just before its first statement. An async generator (a stream) runs nothing until it is read, so it
 * waits when first read; `ready` is asked again at each call.
 */
export function gate<R extends object>(repository: R, ready: () => Promise<void> | undefined): R {
  const methods = new Map<PropertyKey, unknown>();
  return new Proxy(repository, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      let method = methods.get(property);
      if (!method) methods.set(property, (method = gated(target, value as (...args: unknown[]) => unknown, ready)));
      return method;
    },
  });
}

function gated(target: object, method: (...args: unknown[]) => unknown, ready: () => Promise<void> | undefined) {
  if (Object.prototype.toString.call(method) === '[object AsyncGeneratorFunction]') {
    return async function* (...args: unknown[]) {
      await ready();
      yield* method.apply(target, args) as AsyncIterable<unknown>;
    };
  }
  return (...args: unknown[]) => {
    let waiting: Promise<void> | undefined;
    try {
      waiting = ready();
    } catch (error) {
      return Promise.reject(error); // as the method itself would fail: every repository method answers a promise
    }
    return waiting ? waiting.then(() => method.apply(target, args)) : method.apply(target, args);
  };
}
