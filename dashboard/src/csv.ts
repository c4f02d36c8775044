import { SESSION_KEY } from './client';

/**
 * The request log as CSV, streamed by the server (GET /v1/usage/requests.csv, filters as query
 * parameters, times as Unix seconds). The session token is not a cookie (it lives in the tab's
 * sessionStorage), so a plain link cannot carry it: the page fetches the file with the token in
 * the Authorization header and hands it to the browser as a download.
 */
export interface CsvFilter {
  keyId?: string | null;
  model?: string | null;
  status?: string | null;
  /** ISO-8601 instants: from inclusive, to exclusive. */
  from?: string | null;
  to?: string | null;
}

export function requestLogCsvPath(filter: CsvFilter): string {
  const query = new URLSearchParams();
  const seconds = (iso: string) => String(Math.floor(new Date(iso).getTime() / 1000));
  if (filter.keyId) query.set('key_id', filter.keyId);
  if (filter.model) query.set('model', filter.model);
  if (filter.status) query.set('status', filter.status);
  if (filter.from) query.set('from', seconds(filter.from));
  if (filter.to) query.set('to', seconds(filter.to));
  const text = query.toString();
  return `/v1/usage/requests.csv${text ? `?${text}` : ''}`;
}

/** Downloads the CSV of `filter` as `fileName`; resolves to the API's refusal, or null when it was saved. */
export async function downloadRequestLogCsv(filter: CsvFilter, fileName: string): Promise<string | null> {
  const token = sessionStorage.getItem(SESSION_KEY);
  let response: Response;
  try {
    response = await fetch(requestLogCsvPath(filter), { headers: token ? { authorization: `Bearer ${token}` } : {} });
  } catch (error) {
    return `The server could not be reached: ${(error as Error).message}`;
  }
  if (!response.ok) {
    const body = (await response.json().catch(() => null)) as { error?: { message?: string } } | null;
    return body?.error?.message ?? `The export was refused (HTTP ${response.status}).`;
  }
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return null;
}
