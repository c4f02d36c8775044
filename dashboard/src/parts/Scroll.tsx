import type { ReactNode } from 'react';

/**
 * A wide table scrolls sideways inside its box on a small screen, not the page. The box can
 * take the focus, so the keyboard can scroll it too, and is named for screen readers.
 */
export function Scroll({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="scroll" tabIndex={0} role="region" aria-label={label}>
      {children}
    </div>
  );
}
