import { Cancellation } from '../../src/domain/generation/cancellation';

describe('Cancellation', () => {
  it('emits abort once and stays aborted', () => {
    const cancellation = new Cancellation();
    let aborts = 0;
    cancellation.on('abort', () => aborts++);
    cancellation.cancel();
    cancellation.cancel();
    expect({ aborted: cancellation.aborted, aborts }).toEqual({ aborted: true, aborts: 1 });
  });

  it('delay: rejects as soon as it is cancelled while waiting, not when the time runs out', async () => {
    const cancellation = new Cancellation();
    const started = Date.now();
    const waiting = cancellation.delay(5_000, () => new Error('cancelled'));
    setTimeout(() => cancellation.cancel(), 20);
    await expect(waiting).rejects.toThrow('cancelled');
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('delay: resolves after the time when not cancelled and leaves no listener behind; rejects at once once cancelled', async () => {
    const cancellation = new Cancellation();
    await expect(cancellation.delay(10, () => new Error('cancelled'))).resolves.toBeUndefined();
    expect(cancellation.listenerCount('abort')).toBe(0);
    cancellation.cancel();
    await expect(cancellation.delay(5_000, () => new Error('late'))).rejects.toThrow('late');
  });
});
