import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import { GraphQLError, parse, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { buildSchema } from 'type-graphql';
import { WebSocketServer } from 'ws';
import type { Logger } from 'pino';
import { ApiError, detailsForPlane, storageErrorAsApiError } from '../domain/shared/errors';
import { GRAPHQL_FIELD_NAMES } from './field-names';
import { buildContext, type GraphqlServices } from './context';
import type { SessionFeeds } from './session-feeds';
import type { RequestHandler } from 'express';
import { BillingResolver } from './billing';
import { GRAPHQL_LIMITS, graphqlValidationRules, validateWithLimits } from './query-limits';
import { KeyResolver, KeySubscriptionResolver } from './keys';
import { LimitsResolver, OperatorResolver } from './operator';
import { SessionResolver } from './sessions';
import { DeploymentResolver } from './deployments';
import { UsageResolver } from './usage';
import { ModelResolver } from './models';
import { VideoResolver, VideoSubscriptionResolver } from './videos';

/**
 * Every subscription subscribes on the domain's typed event bus itself (subscribeIterator), so
 * type-graphql's string-keyed PubSub, which it requires to exist, is never used.
 */
const UNUSED_PUBSUB = {
  publish(): never {
    throw new Error('GraphQL subscriptions subscribe on the event bus themselves');
  },
  subscribe(): never {
    throw new Error('GraphQL subscriptions subscribe on the event bus themselves');
  },
};

export async function buildGraphqlSchema(): Promise<GraphQLSchema> {
  return buildSchema({
    resolvers: [
      SessionResolver,
      KeyResolver,
      KeySubscriptionResolver,
      OperatorResolver,
      BillingResolver,
      LimitsResolver,
      UsageResolver,
      DeploymentResolver,
      ModelResolver,
      VideoResolver,
      VideoSubscriptionResolver,
    ],
    validate: false,
    pubSub: UNUSED_PUBSUB,
  });
}

/**
 * The one place GraphQL errors get their wire form. A domain error (ApiError, or a storage
 * failure that is the caller's input or an outage) keeps its message with `extensions.code`,
 * `status` and `details`; GraphQL's own errors (syntax, validation) keep theirs; anything else
 * is a defect: logged, answered without internals.
 */
export function formatError(formatted: GraphQLFormattedError, error: unknown, log: Logger): GraphQLFormattedError {
  const thrown = error instanceof GraphQLError && error.originalError ? error.originalError : error;
  const known = thrown instanceof ApiError ? thrown : storageErrorAsApiError(thrown);
  if (known)
    return {
      message: known.message,
      locations: formatted.locations,
      path: formatted.path,
      extensions: { code: known.code, status: known.status, details: detailsForPlane(known, GRAPHQL_FIELD_NAMES) },
    };
  const code = formatted.extensions?.code;
  if (code === 'INTERNAL_SERVER_ERROR' || code === undefined) {
    log.error({ err: error }, 'graphql internal error');
    return { message: 'Internal error.', path: formatted.path, extensions: { code: 'internal_error' } };
  }
  // Never a stack (Apollo adds one unless told otherwise; graphql-ws errors pass here too).
  const { stacktrace: _stack, exception: _exception, ...extensions } = formatted.extensions ?? {};
  return { ...formatted, extensions };
}

/**
 * `/graphql`: Apollo over HTTP POST and graphql-ws over WebSocket on the same path and port,
 * both with the credential of the caller (HTTP header, or `connectionParams.authorization`).
 */
export interface GraphqlOptions {
  introspection: boolean;
  feeds: SessionFeeds;
}

/** The GraphQL API once mounted (server.ts): its HTTP middleware and its WebSocket upgrades. */
export interface MountedGraphql {
  middleware: RequestHandler;
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  close(): Promise<void>;
}

export async function mountGraphql(services: GraphqlServices, log: Logger, options: GraphqlOptions): Promise<MountedGraphql> {
  const schema = await buildGraphqlSchema();
  const { feeds } = options;
  // Upgrades are handed over here rather than by `server:`, with which ws re-emits every error of
  // the HTTP server (a busy port) on the WebSocket server, and graphql-ws prints it with its stack.
  const wsServer = new WebSocketServer({ noServer: true, path: '/graphql', maxPayload: GRAPHQL_LIMITS.maxWebSocketPayloadBytes });
  const handleUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) =>
    wsServer.handleUpgrade(req, socket, head, (ws) => wsServer.emit('connection', ws, req));
  const wsCleanup = useServer(
    {
      // Close reasons never carry an error's message, whatever NODE_ENV says.
      isProd: true,
      schema,
      // Parsed (with the token limit) and validated here: a syntax error is then an error message
      // for that operation, where graphql-ws would print it and close the whole connection.
      onSubscribe: (_ctx, _id, payload) => {
        let document;
        try {
          document = parse(payload.query, { maxTokens: GRAPHQL_LIMITS.maxTokens });
        } catch (error) {
          if (error instanceof GraphQLError) return [error];
          throw error;
        }
        const errors = validateWithLimits(schema, document);
        return errors.length > 0
          ? [...errors]
          : { schema, document, operationName: payload.operationName, variableValues: payload.variables };
      },
      context: (ctx) =>
        buildContext(services, (ctx.connectionParams as { authorization?: unknown } | undefined)?.authorization, {
          feeds,
          clientAddress: ctx.extra.request.socket.remoteAddress,
        }),
      onNext: (_ctx, _id, _payload, _args, result) => {
        if (!result.errors) return result;
        return {
          ...result,
          errors: result.errors.map((e) => formatError(e instanceof GraphQLError ? e.toJSON() : (e as GraphQLFormattedError), e, log)),
        };
      },
      // A feed that fails (its session ended) says why, with the code, as every other refusal;
      // GraphQL's own errors (syntax, validation: no error behind them) go as they are.
      onError: (_ctx, _id, _payload, errors) => errors.map((e) => (e.originalError ? formatError(e.toJSON(), e, log) : e.toJSON())),
    },
    wsServer,
  );
  // A client's broken frame (ws closes the socket itself): one line, not graphql-ws's printed stack.
  wsServer.on('connection', (socket) => {
    socket.removeAllListeners('error');
    socket.on('error', (error: Error & { code?: string }) =>
      log.debug({ err: error.message, code: error.code }, 'graphql-ws: a client sent an invalid frame'),
    );
  });
  const apollo = new ApolloServer({
    schema,
    formatError: (formatted, error) => formatError(formatted, error, log),
    // Tollgate owns shutdown (SIGTERM drains, then closes this): Apollo's own signal handlers
    // would stop it concurrently and hang the exit. The HTTP server is drained by Tollgate's
    // close() before Apollo stops, so Apollo's drain plugin (which would then wait forever for
    // the 'close' of a server already closed) is not used.
    stopOnTerminationSignals: false,
    plugins: [
      {
        async serverWillStart() {
          return {
            async drainServer() {
              await wsCleanup.dispose();
            },
          };
        },
      },
      // Inline traces are for federated subgraphs, which this schema is not: Apollo installs the
      // plugin anyway (inactive), and it loads Apollo's usage-report protobuf code (~1 MB resident).
      ApolloServerPluginInlineTraceDisabled(),
    ],
    introspection: options.introspection,
    // Apollo's default follows NODE_ENV (stacks with server paths unless production or test): off, whatever it says.
    includeStacktraceInErrorResponses: false,
    validationRules: graphqlValidationRules,
    parseOptions: { maxTokens: GRAPHQL_LIMITS.maxTokens },
    // One operation per HTTP request (Apollo's default, stated): a batch would multiply the limits above.
    allowBatchedHttpRequests: false,
  });
  await apollo.start();
  const middleware = expressMiddleware(apollo, {
    context: async ({ req }) => buildContext(services, req.headers.authorization, { feeds, clientAddress: req.socket.remoteAddress }),
  });
  return {
    middleware,
    handleUpgrade,
    close: async () => {
      await apollo.stop();
      wsServer.close();
    },
  };
}
