/**
 * Runs one client's scenarios (a module of this folder) and prints one `@@result` line of JSON
 * per scenario: {scenario, ok, detail}. Started by scripts/clients.mjs under the clients' Node 22
 * with CLIENTS_DIR, TOLLGATE_PROXY (the logging proxy), CLIENT_LABEL (`<client>-<version>`, the
 * proxy's label) and TOLLGATE_KEY. Each scenario gets `base(scenario)`: the URL its client must
 * use as the gateway's root (without /v1), which tells the proxy whose request it forwards.
 */
import { pathToFileURL } from 'node:url';

const [, , file, only] = process.argv;
const { default: client } = await import(pathToFileURL(file).href);
const context = {
  key: process.env.TOLLGATE_KEY,
  base: (scenario) => `${process.env.TOLLGATE_PROXY}/${process.env.CLIENT_LABEL}/${scenario}`,
};
for (const [scenario, run] of await client.scenarios(context)) {
  if (only && !scenario.includes(only)) continue;
  let result;
  try {
    result = { scenario, ok: true, detail: String(await run()) };
  } catch (error) {
    result = {
      scenario,
      ok: false,
      detail: String(error?.message ?? error)
        .split('\n')[0]
        .slice(0, 200),
    };
  }
  process.stdout.write(`@@result ${JSON.stringify(result)}\n`);
}
// Clients may leave sockets or timers open: the results are out.
process.exit(0);
