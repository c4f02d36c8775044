import { readFileSync } from 'node:fs';
import type { Catalog } from '../domain/catalog/types';
import { parseLimits, unknownPlanModels, type LimitsConfig } from '../domain/limits/limits-config';
import { ConfigError } from './env';

/** TOLLGATE_LIMITS_FILE: tiers and plans as JSON, every plan's models checked against the catalog. */
export function loadLimitsFile(file: string, catalog: Catalog): LimitsConfig {
  const origin = `TOLLGATE_LIMITS_FILE ${file}`;
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? `not valid JSON (${error.message})` : String(error));
    throw new ConfigError(`${origin}: cannot be read: ${reason}`);
  }
  let limits: LimitsConfig;
  try {
    limits = parseLimits(json, origin);
  } catch (error) {
    throw new ConfigError(error instanceof Error ? error.message : String(error));
  }
  const unknown = unknownPlanModels(limits, (id) => catalog.byId.has(id));
  if (unknown.length > 0) throw new ConfigError(`${origin}: ${unknown[0]} is not a model of the catalog`);
  return limits;
}
