/** Claude Code (`claude -p`): one turn, and a tool loop (its Read tool, the tool's error result sent back). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bin, runCli } from './kit.mjs';

export default {
  name: 'claude-code',
  package: '@anthropic-ai/claude-code',
  side: 'anthropic',
  async scenarios({ base, key }) {
    const print = (name, args, expect) => [
      name,
      async () => {
        const home = mkdtempSync(join(tmpdir(), 'claude-home-'));
        try {
          const env = {
            ...process.env,
            HOME: home,
            ANTHROPIC_BASE_URL: base(name),
            ANTHROPIC_API_KEY: key,
            ANTHROPIC_MODEL: 'sandbox/echo',
            ANTHROPIC_SMALL_FAST_MODEL: 'sandbox/echo',
            // Offline: no telemetry, update checks or other traffic of its own.
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
            DISABLE_TELEMETRY: '1',
            DISABLE_AUTOUPDATER: '1',
          };
          const { code, stdout, all } = await runCli(bin('claude'), ['-p', ...args], { env, cwd: home });
          const at = stdout.search(expect);
          if (code !== 0 || at === -1) throw new Error(`exit ${code}: ${all.trim().slice(-200)}`);
          return `exit 0: …${stdout.slice(at, at + 70).trim()}`;
        } finally {
          rmSync(home, { recursive: true, force: true });
        }
      },
    ];
    return [
      print('print', ['Say hello'], /Say hello/),
      print('tool-loop', ['[sandbox:tool=Read] read the file', '--allowedTools', 'Read'], /Read/),
    ];
  },
};
