import { AsyncLocalStorage } from 'node:async_hooks';
import { setImmediate as tick } from 'node:timers/promises';
import { switchOffIdleAsyncContexts } from '../../src/infra/async-context';

/** Node 20's own flag: whether the instance is on (and with it the process's promise hooks). */
const isOn = (storage: AsyncLocalStorage<unknown>) => (storage as unknown as { enabled: boolean }).enabled;

describe('switchOffIdleAsyncContexts', () => {
  beforeAll(() => switchOffIdleAsyncContexts());

  it('keeps each context across awaits until its run settles, then switches the instance off', async () => {
    const storage = new AsyncLocalStorage<string>();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const seen: (string | undefined)[] = [];
    const first = storage.run('a', async () => {
      await gate;
      seen.push(storage.getStore());
    });
    const second = storage.run('b', async () => {
      await tick();
      seen.push(storage.getStore());
    });
    await second;
    expect(seen).toEqual(['b']);
    expect(isOn(storage)).toBe(true); // 'a' is still pending
    release();
    await first;
    await tick();
    expect(seen).toEqual(['b', 'a']);
    expect(isOn(storage)).toBe(false);
    expect(storage.getStore()).toBeUndefined();
  });

  it('switches off after a synchronous run, and again after a rejected one, whose caller still sees the rejection', async () => {
    const storage = new AsyncLocalStorage<number>();
    expect(storage.run(1, () => storage.getStore())).toBe(1);
    expect(isOn(storage)).toBe(false);
    expect(() =>
      storage.run(2, () => {
        throw new Error('sync');
      }),
    ).toThrow('sync');
    expect(isOn(storage)).toBe(false);
    await expect(
      storage.run(3, async () => {
        await tick();
        throw new Error('async');
      }),
    ).rejects.toThrow('async');
    await tick();
    expect(isOn(storage)).toBe(false);
  });

  it('leaves an instance entered with enterWith on', async () => {
    const storage = new AsyncLocalStorage<string>();
    await storage.run('x', async () => {
      storage.enterWith('y');
      await tick();
    });
    await tick();
    expect(isOn(storage)).toBe(true);
    storage.disable();
  });
});
