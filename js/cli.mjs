#!/usr/bin/env node
// @ts-check
// `npx context-compaction <command>`: the package's command line (its `bin`).
//   context-compaction analyze <session.jsonl> [--json]
//   context-compaction compact <session.jsonl> [-o out.jsonl] [--offline | --api-key KEY --model M] …
// Everything is in cli-lib.mjs; `context-compaction --help` lists the options and exit codes.
import { run } from './cli-lib.mjs';

process.exitCode = await run(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env });
