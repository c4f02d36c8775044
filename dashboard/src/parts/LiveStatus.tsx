import { useSyncExternalStore } from 'react';
import { live } from '../client';

const TEXT = { idle: 'not connected yet', connecting: 'connecting…', connected: 'connected', closed: 'disconnected (retrying)' };

/** Whether the lists on this page are being updated live. */
export function LiveStatus() {
  const status = useSyncExternalStore(live.subscribe, () => live.status);
  return (
    <p className="muted" role="status" data-live={status}>
      Live updates: {TEXT[status]}
    </p>
  );
}
