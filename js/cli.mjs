#!/usr/bin/env node
// @ts-check
// `npx context-compaction <command>`: the package's command line (its `bin`).
//   context-compaction analyze <session.jsonl> [--json]
//   context-compaction compact <session.jsonl> [-o out.jsonl] [--offline | --api-key KEY --model M] …
// Everything is in cli-lib.mjs; `context-compaction --help` lists the options and exit codes.

// Ctrl-C while the library loads (nothing read or written yet): exit 130 at once. `compact`
// installs its own handler for the run (cli-lib.mjs), which removes this one.
const early = () => process.exit(130);
process.on('SIGINT', early);
process.on('SIGTERM', early);
const { run } = await import('./cli-lib.mjs');
process.off('SIGINT', early);
process.off('SIGTERM', early);

process.exitCode = await run(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env });
