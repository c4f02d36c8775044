import { ApiError, badRequest, type ErrorDetails } from '../shared/errors';

/**
 * The text settings the canonical rules refuse by name, as the domain calls them: a refusal
 * carries the key in `details.field`, and the format the client spoke names it when the error is
 * answered (TextFieldRefusal.named). The domain holds no wire name.
 */
export type TextFieldKey =
  | 'text.outputLimit'
  | 'text.toolChoice'
  | 'text.toolChoiceName'
  | 'text.schema'
  | 'text.thinkingBudget'
  | 'text.prompt'
  | 'text.tools'
  | 'text.mcpServers'
  | 'text.mcpApproval'
  | 'text.maxToolCalls';

/** The kinds of tool a tool choice can name. */
type NamedToolKind = 'function' | 'custom';

/**
 * How one text format words the canonical rules' refusals, declared by its decoder: the name of
 * each field key (`max_tokens`, `tool_choice.function.name`…), how it spells the choice that
 * demands a tool (`'required'`, `'any'`) and what it calls a declared tool of each kind.
 */
export interface TextFieldNames {
  fields: Readonly<Record<TextFieldKey, string>>;
  requiredChoice: string;
  toolNoun: Readonly<Record<NamedToolKind, string>>;
}

/** The refusals as the domain words them, before a format names them (logs, tests of the rules alone). */
const DOMAIN_WORDS: TextFieldNames = {
  fields: {
    'text.outputLimit': 'text.outputLimit',
    'text.toolChoice': 'text.toolChoice',
    'text.toolChoiceName': 'text.toolChoiceName',
    'text.schema': 'text.schema',
    'text.thinkingBudget': 'text.thinkingBudget',
    'text.prompt': 'text.prompt',
    'text.tools': 'text.tools',
    'text.mcpServers': 'text.mcpServers',
    'text.mcpApproval': 'text.mcpApproval',
    'text.maxToolCalls': 'text.maxToolCalls',
  },
  requiredChoice: "'required'",
  toolNoun: { function: 'a function tool', custom: 'a custom tool' },
};

/**
 * A 400 `bad_request` on a text setting: the message and any details that quote a field are
 * written against the format's names, so that each format answers in its own words.
 */
export class TextFieldRefusal extends ApiError {
  constructor(
    readonly key: TextFieldKey,
    private readonly wording: (names: TextFieldNames) => string,
    private readonly extraDetails: (names: TextFieldNames) => ErrorDetails = () => ({}),
  ) {
    super('bad_request', wording(DOMAIN_WORDS), { field: key, ...extraDetails(DOMAIN_WORDS) });
    this.name = 'TextFieldRefusal';
  }

  /** The refusal in the client's format: its message, `details.field` and details in that format's names. */
  named(names: TextFieldNames): ApiError {
    return badRequest(this.wording(names), { field: names.fields[this.key], ...this.extraDetails(names) });
  }
}

/** A refusal of the canonical rules named as `names` say; any other error unchanged. */
export const namedFor = (error: unknown, names: TextFieldNames): unknown =>
  error instanceof TextFieldRefusal ? error.named(names) : error;

/** `{key} {problem}`: the usual shape of a refusal naming one field. */
export function refuseTextField(key: TextFieldKey, problem: (names: TextFieldNames) => string): never {
  throw new TextFieldRefusal(key, (names) => `${names.fields[key]} ${problem(names)}`);
}
