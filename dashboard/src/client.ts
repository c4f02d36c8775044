import { Client, cacheExchange, fetchExchange, mapExchange, subscriptionExchange, type CombinedError } from '@urql/core';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';

/**
 * One GraphQL client per session: queries and mutations over HTTP POST to /graphql, and
 * subscriptions over graphql-ws on the same path, both carrying the session token.
 */

/** Where the tab keeps its session token (sessionStorage: closing the tab forgets it). */
export const SESSION_KEY = 'tollgate.session';

export type LiveStatus = 'idle' | 'connecting' | 'connected' | 'closed';

/** The state of the graphql-ws connection, shown next to live lists (it opens with the first subscription). */
export const live = {
  status: 'idle' as LiveStatus,
  listeners: new Set<() => void>(),
  set(status: LiveStatus) {
    live.status = status;
    for (const listener of live.listeners) listener();
  },
  subscribe(listener: () => void) {
    live.listeners.add(listener);
    return () => void live.listeners.delete(listener);
  },
};

export function createGraphqlClient(token: string | null, onSessionLost: () => void): { client: Client; dispose(): void } {
  const authorization = token ? `Bearer ${token}` : null;
  let ws: WsClient | null = null;
  if (authorization) {
    ws = createWsClient({
      url: `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`,
      connectionParams: { authorization },
      lazy: true,
      retryAttempts: 10,
      on: {
        connecting: () => live.set('connecting'),
        connected: () => live.set('connected'),
        closed: () => live.set('closed'),
      },
    });
  }
  const socket = ws;
  const client = new Client({
    url: '/graphql',
    preferGetMethod: false,
    requestPolicy: 'cache-and-network',
    fetchOptions: () => (authorization ? { headers: { authorization } } : {}),
    exchanges: [
      mapExchange({
        onError(error) {
          // An expired or signed-out session: back to the sign-in form, with the API's reason.
          if (authorization && error.graphQLErrors.some((e) => e.extensions?.code === 'invalid_token')) onSessionLost();
        },
      }),
      cacheExchange,
      fetchExchange,
      ...(socket
        ? [
            subscriptionExchange({
              forwardSubscription: (request) => ({
                subscribe: (sink) => ({ unsubscribe: socket.subscribe({ ...request, query: request.query ?? '' }, sink) }),
              }),
            }),
          ]
        : []),
    ],
  });
  return {
    client,
    dispose: () => {
      void socket?.dispose();
      live.set('idle');
    },
  };
}

/** The API's own messages for a refusal (each GraphQL error, or why the request did not arrive). */
export function errorMessages(error: CombinedError | undefined | null): string[] {
  if (!error) return [];
  if (error.graphQLErrors.length > 0) return error.graphQLErrors.map((e) => e.message);
  return [error.networkError?.message ? `The server could not be reached: ${error.networkError.message}` : error.message];
}

/** The wait a 429 `rate_limited` asks for (seconds), or null for any other outcome. */
export function retryAfterSeconds(error: CombinedError | undefined | null): number | null {
  const refusal = error?.graphQLErrors.find((e) => e.extensions?.code === 'rate_limited');
  const seconds = (refusal?.extensions?.details as { retry_after_seconds?: unknown } | undefined)?.retry_after_seconds;
  return typeof seconds === 'number' && seconds > 0 ? seconds : null;
}
