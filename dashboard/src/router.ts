import { useEffect, useState } from 'react';

/** The dashboard's pages, as paths under /dashboard (the server answers every one with the app). */
export const PAGES = [
  { path: '/dashboard', title: 'Account' },
  { path: '/dashboard/keys', title: 'Keys' },
  { path: '/dashboard/spend', title: 'Spend' },
  { path: '/dashboard/requests', title: 'Request log' },
  { path: '/dashboard/ledger', title: 'Ledger' },
  { path: '/dashboard/videos', title: 'Videos' },
  { path: '/dashboard/models', title: 'Models' },
] as const;

export type PagePath = (typeof PAGES)[number]['path'];

const normalise = (path: string): string => (path.length > 1 ? path.replace(/\/+$/, '') : path);

export function navigate(path: string): void {
  if (normalise(location.pathname) === path) return;
  history.pushState(null, '', path);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

export function usePath(): string {
  const [path, setPath] = useState(() => normalise(location.pathname));
  useEffect(() => {
    const update = () => setPath(normalise(location.pathname));
    window.addEventListener('popstate', update);
    return () => window.removeEventListener('popstate', update);
  }, []);
  return path;
}
