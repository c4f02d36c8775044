/** Codex (`codex exec`) with a custom provider on the Responses wire: a turn, tool loops, a namespace tool, reasoning, and its default web search refused by design. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bin, clientsDir, expectIncludes, runCli } from './kit.mjs';

/** `~/.codex/config.toml` pointing Codex at Tollgate (docs/clients.md). */
const config = ({ model, baseUrl, webSearch }) =>
  [
    `model = "${model}"`,
    'model_provider = "tollgate"',
    ...(webSearch ? [`web_search = "${webSearch}"`] : []),
    '',
    '[model_providers.tollgate]',
    'name = "Tollgate"',
    `base_url = "${baseUrl}"`,
    'env_key = "TOLLGATE_API_KEY"',
    'wire_api = "responses"',
    '',
  ].join('\n');

export default {
  name: 'codex',
  package: '@openai/codex',
  side: 'openai',
  async scenarios({ base, key }) {
    const exec = async (name, prompt, { model = 'sandbox/echo', webSearch = 'disabled' } = {}) => {
      // Not under the system temp dir: Codex refuses to put its helper binaries there.
      const home = mkdtempSync(join(clientsDir, 'codex-home-'));
      const work = mkdtempSync(join(clientsDir, 'codex-work-'));
      try {
        writeFileSync(join(home, 'config.toml'), config({ model, baseUrl: `${base(name)}/v1`, webSearch }));
        const { all } = await runCli(bin('codex'), ['exec', '--skip-git-repo-check', '-C', work, prompt], {
          env: { ...process.env, CODEX_HOME: home, TOLLGATE_API_KEY: key },
        });
        return all;
      } finally {
        rmSync(home, { recursive: true, force: true });
        rmSync(work, { recursive: true, force: true });
      }
    };
    return [
      ['exec-hello', async () => expectIncludes(await exec('exec-hello', 'Say hello to Tollgate'), 'Say hello to Tollgate')],
      [
        'exec-tool-loop',
        async () =>
          expectIncludes(await exec('exec-tool-loop', 'Run a shell command [sandbox:tool=exec_command]'), 'Tool exec_command returned'),
      ],
      [
        'exec-namespace-tool',
        async () =>
          expectIncludes(
            await exec('exec-namespace-tool', 'Close the agent [sandbox:tool=multi_agent_v1__close_agent]'),
            'returned: invalid agent id',
          ),
      ],
      [
        'exec-reasoning',
        async () =>
          expectIncludes(
            await exec('exec-reasoning', 'Think, then list files [sandbox:tool=exec_command]', { model: 'sandbox/reasoner' }),
            'Tool exec_command returned',
          ),
      ],
      [
        'exec-web-search-default',
        async () => {
          expectIncludes(await exec('exec-web-search-default', 'Say hello', { webSearch: null }), 'web_search = \\"disabled\\"');
          return 'refused as designed: the error says web_search = "disabled"';
        },
      ],
    ];
  },
};
