import { useCallback, useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { Provider, useMutation } from 'urql';
import { createGraphqlClient, retryAfterSeconds, SESSION_KEY } from './client';
import { SignInDocument, SignOutDocument } from './generated/graphql';
import { AccountPage } from './pages/AccountPage';
import { LiveActivity } from './live';
import { KeysPage } from './pages/KeysPage';
import { LedgerPage } from './pages/LedgerPage';
import { ModelsPage } from './pages/ModelsPage';
import { RequestLogPage } from './pages/RequestLogPage';
import { SpendPage } from './pages/SpendPage';
import { VideosPage } from './pages/VideosPage';
import { ErrorList } from './parts/ErrorList';
import { navigate, PAGES, usePath } from './router';

/** The session token lives in this tab only (sessionStorage): closing the tab forgets it. */
export function App() {
  const [token, setToken] = useState<string | null>(() => sessionStorage.getItem(SESSION_KEY));
  const [notice, setNotice] = useState<string | null>(null);
  const lose = useCallback(() => {
    sessionStorage.removeItem(SESSION_KEY);
    setToken(null);
    setNotice('Your session ended: sign in again.');
  }, []);
  const { client, dispose } = useMemo(() => createGraphqlClient(token, lose), [token, lose]);
  useEffect(() => dispose, [dispose]);

  const signedIn = (newToken: string) => {
    sessionStorage.setItem(SESSION_KEY, newToken);
    setNotice(null);
    setToken(newToken);
  };
  const signedOut = () => {
    sessionStorage.removeItem(SESSION_KEY);
    setNotice('Signed out.');
    setToken(null);
  };

  return <Provider value={client}>{token ? <Shell onSignedOut={signedOut} /> : <SignIn onSignedIn={signedIn} notice={notice} />}</Provider>;
}

function SignIn({ onSignedIn, notice }: { onSignedIn: (token: string) => void; notice: string | null }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [result, signIn] = useMutation(SignInDocument);
  // After too many failed sign-ins the API asks for a wait: shown counting down, the button off meanwhile.
  const [retryAt, setRetryAt] = useState<number | null>(null);
  const now = useSecondTicks(retryAt);
  const waitSeconds = retryAt !== null && retryAt > now ? Math.ceil((retryAt - now) / 1000) : 0;
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const answer = await signIn({ email, password });
    if (answer.data) onSignedIn(answer.data.signIn.token);
    const wait = retryAfterSeconds(answer.error);
    setRetryAt(wait === null ? null : Date.now() + wait * 1000);
  };
  return (
    <main className="signin">
      <h1>Tollgate</h1>
      {notice && <p role="status">{notice}</p>}
      <form onSubmit={submit} aria-labelledby="signin-title">
        <h2 id="signin-title">Sign in</h2>
        <label>
          Email
          <input type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </label>
        <label>
          Password
          <input type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
        {retryAt === null && <ErrorList error={result.error} />}
        {waitSeconds > 0 && (
          <div className="error" role="alert">
            <p>Too many failed sign-ins. You can try again in {waitSeconds} s.</p>
          </div>
        )}
        <button type="submit" disabled={result.fetching || waitSeconds > 0}>
          {result.fetching ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}

/** Date.now(), refreshed a few times a second until `until` has passed. */
function useSecondTicks(until: number | null): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (until === null) return;
    setNow(Date.now());
    const timer = setInterval(() => {
      setNow(Date.now());
      if (Date.now() >= until) clearInterval(timer);
    }, 250);
    return () => clearInterval(timer);
  }, [until]);
  return now;
}

function Shell({ onSignedOut }: { onSignedOut: () => void }) {
  const path = usePath();
  const [signOutResult, signOut] = useMutation(SignOutDocument);
  const heading = useRef<HTMLHeadingElement>(null);
  const page = PAGES.find((p) => p.path === path);
  useEffect(() => {
    document.title = `${page?.title ?? 'Not found'} · Tollgate`;
    heading.current?.focus();
  }, [page]);
  const out = async () => {
    const answer = await signOut({});
    if (!answer.error) onSignedOut();
  };
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header>
        <span className="brand">Tollgate</span>
        <nav aria-label="Dashboard">
          <ul>
            {PAGES.map((p) => (
              <li key={p.path}>
                <a
                  href={p.path}
                  aria-current={p.path === path ? 'page' : undefined}
                  onClick={(e) => {
                    if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
                    e.preventDefault();
                    navigate(p.path);
                  }}
                >
                  {p.title}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" className="secondary" onClick={out} disabled={signOutResult.fetching}>
          Sign out
        </button>
      </header>
      <LiveActivity>
        <main id="main">
          <ErrorList error={signOutResult.error} />
          <h1 ref={heading} tabIndex={-1}>
            {page?.title ?? 'Not found'}
          </h1>
          {path === '/dashboard' && <AccountPage />}
          {path === '/dashboard/keys' && <KeysPage />}
          {path === '/dashboard/spend' && <SpendPage />}
          {path === '/dashboard/requests' && <RequestLogPage />}
          {path === '/dashboard/ledger' && <LedgerPage />}
          {path === '/dashboard/videos' && <VideosPage />}
          {path === '/dashboard/models' && <ModelsPage />}
          {!page && <p>There is no such page. Choose one above.</p>}
        </main>
      </LiveActivity>
    </>
  );
}
