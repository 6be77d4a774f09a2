#!/usr/bin/env node
// @ts-check
// `npx context-compaction <command>`: the package's command line (its `bin`).
//   context-compaction analyze <session.jsonl> [--json]
//   context-compaction simulate <session.jsonl> [--policy P]... [--prices JSON] [--json]
//   context-compaction compact <session.jsonl> [-o out.jsonl] [--offline | --api-key KEY --model M] …
// Everything is in cli-lib.mjs; `context-compaction --help` lists the options and exit codes.

// Ctrl-C while the library loads or before a command has its own handler (nothing written
// yet): exit 130 at once. `compact` installs its own handler for the run (cli-lib.mjs).
// It stays installed for the whole run, so no signal falls in a gap between handlers (where a
// process started in the background would ignore it); once `compact` has its own handler, this
// one leaves the decision to it.
/** @param {NodeJS.Signals} signal */
const early = (signal) => {
  if (process.listenerCount(signal) > 1) return;
  process.exit(130);
};
process.on('SIGINT', early);
process.on('SIGTERM', early);
const { run } = await import('./cli-lib.mjs');
try {
  process.exitCode = await run(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env });
} finally {
  process.off('SIGINT', early);
  process.off('SIGTERM', early);
}
