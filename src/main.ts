#!/usr/bin/env node
import { runCli } from './cli/dispatch';

// `tollgate [start]`, `tollgate migrate`, `tollgate admin …` (see src/cli/dispatch.ts).
void runCli(process.argv.slice(2)).then((code) => {
  if (code !== null) process.exit(code);
});
