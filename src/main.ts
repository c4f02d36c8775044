#!/usr/bin/env node
import { runCli } from './cli/dispatch';

// `tollgate [start]`, `tollgate migrate`, `tollgate admin …` (see src/cli/dispatch.ts).
// runCli reports every failure itself and resolves with the exit code.
void runCli(process.argv.slice(2)).then((code) => {
  if (code !== null) process.exit(code);
});
