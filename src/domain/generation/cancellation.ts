import { EventEmitter } from 'node:events';

/**
 * One request's cancellation: set when its client goes away, so that the provider call stops.
 * Emits 'abort' once. undici takes it as a request's `signal` (it accepts an EventEmitter).
 *
 * Not an AbortSignal: Node 20 builds every AbortSignal by giving an EventTarget a new prototype
 * and then new properties, and V8 keeps every such object past two young-generation GCs
 * (promoted memory and, at load, frequent full GCs; docs/performance.md).
 */
export class Cancellation extends EventEmitter {
  aborted = false;

  cancel(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }

  /** Resolves after `ms`, or rejects with `onCancel()` as soon as this is cancelled. */
  delay(ms: number, onCancel: () => Error): Promise<void> {
    if (this.aborted) return Promise.reject(onCancel());
    return new Promise((resolve, reject) => {
      const cancelled = () => {
        clearTimeout(timer);
        reject(onCancel());
      };
      const timer = setTimeout(() => {
        this.off('abort', cancelled);
        resolve();
      }, ms);
      this.once('abort', cancelled);
    });
  }
}
