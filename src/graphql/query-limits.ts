import { costLimitRule } from '@escape.tech/graphql-armor-cost-limit';
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { specifiedRules, validate, type GraphQLError, type ValidationContext, type ValidationRule } from 'graphql';

/**
 * Bounds on what one GraphQL document may ask, checked while it is validated (before any
 * resolver runs), so a hostile query is refused for the price of reading it. The numbers sit
 * far above what an admin UI asks (the largest query of the dashboard is depth 5, no aliases,
 * cost under 200) and far below what would cost the gateway real work.
 */
export const GRAPHQL_LIMITS = {
  /** Nested selections (fragments flattened, so a fragment cycle cannot hide depth). */
  maxDepth: 10,
  /** Aliases per operation: 500 aliases of one field are 500 resolver calls. */
  maxAliases: 15,
  /** graphql-armor's cost: objects 2, scalars 1, times depth. */
  maxCost: 5_000,
  /** Lexer tokens per document (graphql-js stops parsing past it). */
  maxTokens: 2_000,
  /** Largest graphql-ws message (bytes); an HTTP body is bounded by TOLLGATE_MAX_BODY_BYTES. */
  maxWebSocketPayloadBytes: 64 * 1024,
} as const;

/** A refusal is reported as a validation error (400), not thrown (which Apollo would answer 500). */
const reportRefusal = {
  propagateOnRejection: false,
  onReject: [(context: ValidationContext | null, error: GraphQLError) => context?.reportError(error)],
};

export const graphqlValidationRules: ValidationRule[] = [
  maxDepthRule({ n: GRAPHQL_LIMITS.maxDepth, flattenFragments: true, exposeLimits: true, ...reportRefusal }),
  maxAliasesRule({ n: GRAPHQL_LIMITS.maxAliases, exposeLimits: true, ...reportRefusal }),
  costLimitRule({ maxCost: GRAPHQL_LIMITS.maxCost, flattenFragments: true, exposeLimits: true, ...reportRefusal }),
];

/** graphql-ws validates with this: the same rules as the HTTP plane. */
export const validateWithLimits: typeof validate = (schema, document, rules, options, typeInfo) =>
  validate(schema, document, [...(rules ?? specifiedRules), ...graphqlValidationRules], options, typeInfo);
