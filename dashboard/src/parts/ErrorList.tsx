import type { CombinedError } from '@urql/core';
import { errorMessages } from '../client';

/** Every refusal is shown with the API's own message, announced to screen readers. */
export function ErrorList({ error, messages }: { error?: CombinedError | null; messages?: string[] }) {
  const all = [...errorMessages(error), ...(messages ?? [])];
  if (all.length === 0) return null;
  return (
    <div className="error" role="alert">
      {all.map((message, i) => (
        <p key={i}>{message}</p>
      ))}
    </div>
  );
}
