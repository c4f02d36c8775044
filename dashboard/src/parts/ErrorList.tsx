import type { CombinedError } from '@urql/core';
import { errorMessages } from '../client';
import { refusalInWords } from '../refusals';

/**
 * Every refusal is shown with the API's own message, announced to screen readers. With `fields`
 * (the API's field names → the form's labels), a refusal naming one of them is put in the
 * form's words: its label and amounts in dollars.
 */
export function ErrorList({
  error,
  messages,
  fields,
}: {
  error?: CombinedError | null;
  messages?: string[];
  fields?: Record<string, string>;
}) {
  const all = [...errorMessages(error).map((m) => (fields ? refusalInWords(m, fields) : m)), ...(messages ?? [])];
  if (all.length === 0) return null;
  return (
    <div className="error" role="alert">
      {all.map((message, i) => (
        <p key={i}>{message}</p>
      ))}
    </div>
  );
}
