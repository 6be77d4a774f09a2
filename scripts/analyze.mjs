#!/usr/bin/env node
// Usage: node scripts/analyze.mjs [path.jsonl] [--json]
//
// Measures the library on a Claude Code session file: for every API call, the real context
// size (from its usage) against tokenCountWithEstimation of the lines before it; then the
// warning state at the end, the compaction boundaries found, and what microCompact would free.
// Without a path it analyses the shared transcript with a real auto-compaction.
// Exit codes: 0 ok, 2 bad arguments, missing/unreadable file or malformed transcript.
//
// The analysis is the package's own (`npx context-compaction analyze`): js/cli-lib.mjs, run
// from the built package (scripts/package.mjs copies it into pkg/ next to node.js).
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CliError, EXIT, analyzeLines, formatAnalysis, readTranscriptFile } from '../pkg/cli-lib.mjs';

/** The transcript analysed when no path is given: a session with a real auto-compaction. */
const DEFAULT_TRANSCRIPT = fileURLToPath(new URL('../../shared/transcripts/cc_long_autocompact_4d5611e5.jsonl', import.meta.url));

const USAGE = 'usage: node scripts/analyze.mjs [path.jsonl] [--json]';
const usageError = (message) => new CliError(`${message}\n${USAGE}`, EXIT.USAGE, { code: 'USAGE' });

function main(argv) {
  let json = false;
  const paths = [];
  for (const a of argv) {
    if (a === '--json') json = true;
    else if (a === '-h' || a === '--help') {
      console.log(USAGE);
      return EXIT.OK;
    } else if (a.startsWith('-') && a !== '-') {
      throw usageError(`unknown option ${a}`);
    } else paths.push(a);
  }
  if (paths.length > 1) throw usageError('one transcript at a time');
  const file = paths.length ? resolve(paths[0]) : DEFAULT_TRANSCRIPT;
  const report = analyzeLines(readTranscriptFile(file).lines, file);
  console.log(json ? JSON.stringify(report, null, 2) : formatAnalysis(report));
  return EXIT.OK;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (e) {
  if (e instanceof CliError) {
    console.error(`analyze: ${e.message}`);
    process.exitCode = e.exitCode;
  } else {
    throw e;
  }
}
