/** Child process of `npm run bench`: one Tollgate instance, alone in its process. */
import 'reflect-metadata';
import pino from 'pino';
import { loadConfig } from '../src/config';
import { createTollgate } from '../src/server';

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const tollgate = await createTollgate({ config, databaseUrl: process.env.DATABASE_URL!, log: pino({ level: 'silent' }) });
  const port = await tollgate.listen(0, '127.0.0.1');
  process.send?.({ port });
  process.on('disconnect', () => void tollgate.close(2_000).finally(() => process.exit(0)));
}
void main();
