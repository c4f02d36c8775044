import { KEY_KINDS } from '../../domain/keys/entities';
import { KEY_CREATE_FIELDS, KEY_UPDATE_FIELDS, SIGN_IN_FIELDS } from '../keys';
import { answer, any, arrayOf, int, micro, nullable, object, oneOf, ref, str, USAGE_COST_FIELDS, type JsonSchema } from './schema';
import { MEDIA_SCHEMAS } from './media';
import { chatRequestSchema, responsesRequestSchema } from './text-requests';
import { messagesRequestSchema } from './messages-request';
import { MESSAGES_SCHEMAS } from './messages-request';

/** Named schemas of the document (`#/components/schemas/<name>`). */

type FieldTable<Fields extends readonly string[]> = Readonly<Record<Fields[number], JsonSchema>>;

const keyName = str('1 to 100 characters (trimmed), no control characters, well-formed Unicode (no half of a surrogate pair).', {
  minLength: 1,
});
const spendLimit = {
  ...nullable(micro('From 1000000 ($1) to 100000000000 ($100,000) micro-dollars per UTC month.')),
  description: 'Monthly spend limit; null removes it.',
};

// Keyed by the lists the key routes refuse unknown fields with: the two cannot drift.
const KEY_CREATE: FieldTable<typeof KEY_CREATE_FIELDS> = {
  name: keyName,
  kind: oneOf(KEY_KINDS, 'prepaid (billed from the balance, default) or plan (draws on the user’s plan).'),
  monthly_spend_limit_micro: spendLimit,
  expires_at: nullable(int('Unix seconds.')),
};
const KEY_UPDATE: FieldTable<typeof KEY_UPDATE_FIELDS> = { name: keyName, monthly_spend_limit_micro: spendLimit };
const SIGN_IN: FieldTable<typeof SIGN_IN_FIELDS> = { email: str(undefined, { minLength: 1 }), password: str(undefined, { minLength: 1 }) };

const unixSeconds = int('Unix seconds.');
const listOf = (item: string) => answer({ object: oneOf(['list']), data: arrayOf(ref(item)) });

export const SCHEMAS: Readonly<Record<string, JsonSchema>> = {
  Error: answer(
    {
      error: answer({
        code: str('Machine-readable code, e.g. bad_request, invalid_token, api_insufficient_balance, rate_limited.'),
        message: str('Human-readable; names the offending field where relevant.'),
        details: { type: 'object', description: 'Depends on the code (e.g. limit_micro, spent_micro, resets_at).' },
      }),
    },
    ['error'],
    'The error envelope of every refusal.',
  ),
  ApiKey: answer({
    id: str(),
    object: oneOf(['api_key']),
    name: str(),
    kind: oneOf(KEY_KINDS),
    prefix: str('First 12 characters of the secret, for recognising it.'),
    created_at: unixSeconds,
    last_used_at: nullable(unixSeconds),
    expires_at: nullable(unixSeconds),
    revoked_at: nullable(unixSeconds),
    monthly_spend_limit_micro: nullable(micro('Monthly spend limit.')),
    month_spent_micro: micro('Settled charges this UTC month.'),
  }),
  CreatedApiKey: { allOf: [ref('ApiKey'), answer({ secret: str('The key itself, shown only here.') })] },
  ApiKeyList: listOf('ApiKey'),
  KeyEvent: answer({
    id: str(),
    object: oneOf(['key_event']),
    key_id: str(),
    kind: oneOf(['created', 'renamed', 'spend_limit_changed', 'spend_limit_reached', 'revoked']),
    created_at: unixSeconds,
    actor_user_id: nullable(str()),
    data: { type: 'object' },
  }),
  KeyEventPage: answer({
    object: oneOf(['list']),
    data: arrayOf(ref('KeyEvent')),
    first_id: nullable(str()),
    last_id: nullable(str()),
    has_more: { type: 'boolean' },
  }),
  KeyStatus: answer({
    object: oneOf(['key']),
    id: str(),
    name: str(),
    kind: oneOf(KEY_KINDS),
    prefix: str('First 12 characters of the secret.'),
    expires_at: nullable(unixSeconds),
    month: str('The UTC month, YYYY-MM.'),
    monthly_spend_limit_micro: nullable(micro('Monthly spend limit.')),
    month_settled_micro: micro('Settled charges this UTC month.'),
    month_reserved_micro: micro('Held by requests in flight (and budget leases).'),
    month_spent_micro: micro('settled + reserved: what the limit is checked against.'),
    month_remaining_micro: nullable(micro('limit − spent, never negative; null without a limit.')),
    month_resets_at: unixSeconds,
    account: answer({
      balance_micro: micro('Settled balance.'),
      reserved_micro: micro('Held by requests in flight.'),
      available_micro: micro('balance − reserved.'),
    }),
  }),
  Session: answer({
    object: oneOf(['session']),
    token: str('Session credential (Authorization: Bearer).'),
    expires_at: unixSeconds,
    user_id: str(),
    account_id: str(),
  }),
  TextModel: answer(
    {
      id: str(),
      object: oneOf(['model']),
      created: unixSeconds,
      owned_by: str(),
      context_length: int(),
      top_provider: answer({ context_length: int(), max_completion_tokens: int() }),
      pricing: answer(
        {
          prompt: str('USD per token.'),
          completion: str('USD per token.'),
          input_cache_read: str('USD per token read from the prompt cache.'),
          input_cache_write_5m: str('USD per token written to the prompt cache, entries that live 5 minutes.'),
          input_cache_write_1h: str('USD per token written to the prompt cache, entries that live 1 hour.'),
        },
        [],
        'Prepaid keys only.',
      ),
    },
    ['id', 'object', 'created', 'owned_by', 'context_length', 'top_provider'],
  ),
  TextModelList: listOf('TextModel'),
  ImageModel: answer(
    {
      id: str(),
      object: oneOf(['model']),
      created: unixSeconds,
      owned_by: str(),
      modes: arrayOf(str()),
      sizes: arrayOf(str()),
      max_input_images: int(),
      pricing: answer({ per_image: str('USD.') }),
    },
    ['id', 'modes', 'sizes', 'max_input_images'],
  ),
  ImageModelList: listOf('ImageModel'),
  VideoModel: answer(
    {
      id: str(),
      object: oneOf(['model']),
      created: unixSeconds,
      owned_by: str(),
      modes: arrayOf(str()),
      resolutions: arrayOf(str()),
      ratios: arrayOf(str()),
      durations: arrayOf(int()),
      max_input_images: int(),
      pricing: answer({ per_second: str('USD.') }),
    },
    ['id', 'modes', 'resolutions', 'ratios', 'durations', 'max_input_images'],
  ),
  VideoModelList: listOf('VideoModel'),
  ModelEntry: {
    anyOf: [ref('TextModel'), ref('ImageModel'), ref('VideoModel')],
    description: 'A text, image or video model, as its list shows it.',
  },
  Status: answer({ status: str() }),
  ChatCompletionRequest: chatRequestSchema,
  ResponsesRequest: responsesRequestSchema,
  MessagesRequest: messagesRequestSchema,
  CreateKeyRequest: object(KEY_CREATE, ['name']),
  UpdateKeyRequest: object(KEY_UPDATE),
  SignInRequest: object(SIGN_IN, ['email', 'password']),
  OpenApiDocument: { type: 'object', description: 'An OpenAPI 3.1 document.' },
  GraphqlResult: answer({ data: any('The result.'), errors: arrayOf(any('An error; extensions.code from the error table.')) }, []),
  GraphqlRequest: answer({ query: str(), variables: { type: 'object' }, operationName: str() }, ['query']),
  OpenAiAnswer: any(
    'An answer in the OpenAI format of the endpoint (chat.completion, or response), or its server-sent events when stream is true. Its usage carries cost, cost_micro and cost_details (UsageCost), in the body and in the last stream chunk with usage (Chat: stream_options.include_usage) or response.completed.',
  ),
  MessagesAnswer: any(
    "An answer in the Anthropic Messages format, or its server-sent events when stream is true. Its usage carries cost, cost_micro and cost_details (UsageCost), in the body and in the stream's message_delta.",
  ),
  UsageCost: answer(USAGE_COST_FIELDS, undefined, 'The fields every charged answer adds to its usage object.'),
  ...MEDIA_SCHEMAS,
  ...MESSAGES_SCHEMAS,
};
