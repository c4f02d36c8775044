import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import { startTextHarness, type TextHarness } from './text';

/**
 * Shared by the routing-* integration tests: a catalog file of routed models, the access log's
 * lines as JSON, and a text harness started on both.
 */

/** A catalog written to a temporary file (TOLLGATE_CATALOG), removed by `remove`. */
export interface CatalogFile {
  path: string;
  remove(): void;
}

export function writeCatalogFile(catalog: unknown): CatalogFile {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-routing-'));
  const path = join(dir, 'catalog.json');
  writeFileSync(path, JSON.stringify(catalog));
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A logger at `info` whose lines (the access log's among them) are kept, parsed, in `lines`. */
export function capturedLog(): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level: 'info' }, sink), lines };
}

/** A text model of the catalog file's shape, OpenAI's `gpt-4o-mini` by default; `fields` add or override. */
export const catalogTextModel = (id: string, vendor: string, fields: Record<string, unknown> = {}) => ({
  kind: 'text',
  id,
  vendor,
  vendor_model_id: 'gpt-4o-mini',
  created: 1721260800,
  context_length: 128000,
  max_output_tokens: 4096,
  ...fields,
});

export interface RoutingHarness extends TextHarness {
  /** The access log's lines (one JSON line per request), and every other line logged. */
  logLines: Record<string, unknown>[];
}

/** Tollgate on `catalog` (written to a file) and `env`, its log captured; `stop` removes the file too. */
export async function startRoutingHarness(catalog: unknown, env: Record<string, string>): Promise<RoutingHarness> {
  const file = writeCatalogFile(catalog);
  const { log, lines } = capturedLog();
  try {
    const h = await startTextHarness({ TOLLGATE_CATALOG: file.path, ...env }, { log });
    return {
      ...h,
      logLines: lines,
      stop: async () => {
        await h.stop();
        file.remove();
      },
    };
  } catch (error) {
    file.remove();
    throw error;
  }
}
