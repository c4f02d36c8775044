import { AsyncLocalStorage } from 'node:async_hooks';
import { types } from 'node:util';

/** On the prototype, so that module copies (test runners load one per test file) patch it once. */
const PATCHED = Symbol.for('tollgate.switchOffIdleAsyncContexts');

/**
 * Node 20 implements AsyncLocalStorage with promise hooks: once any instance has been used,
 * every promise the process creates pays a hook call and two extra properties, for the rest of
 * the process's life: a sizeable share of a streamed request's CPU and allocations, none of it
 * needed (docs/performance.md has the figures).
 *
 * MikroORM uses two instances, each only for the span of one operation: its transaction
 * context (`em.transactional`) and its flush guard (`em.flush`). Tollgate never relies on the
 * transaction context reaching beyond the `tx` its callbacks are given. This turns an
 * instance off again once none of its `run()` calls is pending, so the hooks run only while an
 * ORM transaction or flush is under way. The text endpoints do neither (billing goes through
 * SQL functions), so they run without hooks.
 *
 * Kept on: an instance entered with `enterWith()` (its context has no end). Not needed from
 * Node 24 on, whose AsyncLocalStorage needs no hooks (AsyncContextFrame).
 */
export function switchOffIdleAsyncContexts(): void {
  const prototype = AsyncLocalStorage.prototype as unknown as Record<symbol, boolean>;
  if (Number(process.versions.node.split('.')[0]) >= 24 || prototype[PATCHED]) return;
  prototype[PATCHED] = true;
  const { run, enterWith } = AsyncLocalStorage.prototype;
  const pendingRuns = new WeakMap<AsyncLocalStorage<unknown>, number>();
  const entered = new WeakSet<AsyncLocalStorage<unknown>>();
  const finished = (storage: AsyncLocalStorage<unknown>): void => {
    const pending = (pendingRuns.get(storage) ?? 1) - 1;
    pendingRuns.set(storage, pending);
    if (pending === 0 && !entered.has(storage)) storage.disable();
  };

  /* eslint-disable @typescript-eslint/no-explicit-any -- the signature Node declares for run() */
  AsyncLocalStorage.prototype.run = function <R>(
    this: AsyncLocalStorage<unknown>,
    store: unknown,
    callback: (...args: any[]) => R,
    ...args: any[]
  ): R {
    /* eslint-enable @typescript-eslint/no-explicit-any */
    pendingRuns.set(this, (pendingRuns.get(this) ?? 0) + 1);
    let result: R;
    try {
      result = run.call(this, store, callback, ...args) as R;
    } catch (error) {
      finished(this);
      throw error;
    }
    // A promise's context lasts until it settles. Its callers still get its value or its
    // rejection; only a rejection nobody awaits is no longer reported as unhandled.
    // (isPromise, not instanceof: a promise from another realm, such as a test runner's
    // context, is one too. Other thenables are not touched: calling then() may run them.)
    const settle = () => finished(this);
    if (types.isPromise(result)) result.then(settle, settle);
    else settle();
    return result;
  };
  AsyncLocalStorage.prototype.enterWith = function (this: AsyncLocalStorage<unknown>, store: unknown): void {
    entered.add(this);
    enterWith.call(this, store);
  };
}
