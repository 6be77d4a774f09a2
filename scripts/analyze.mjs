#!/usr/bin/env node
// Usage: node scripts/analyze.mjs [path.jsonl] [--json]
//
// Measures the library on a Claude Code session file: for every API call, the real context
// size (from its usage) against tokenCountWithEstimation of the lines before it; then the
// warning state at the end, the compaction boundaries found, and what microCompact would free.
// Without a path it analyses the shared transcript with a real auto-compaction.
// Exit codes: 0 ok, 2 bad arguments, missing/unreadable file or malformed transcript.
import { resolve } from 'node:path';
import { AnalysisError, DEFAULT_TRANSCRIPT, analyzeFile, formatReport } from './analysis-lib.mjs';

const USAGE = 'usage: node scripts/analyze.mjs [path.jsonl] [--json]';

function main(argv) {
  let json = false;
  const paths = [];
  for (const a of argv) {
    if (a === '--json') json = true;
    else if (a === '-h' || a === '--help') {
      console.log(USAGE);
      return 0;
    } else if (a.startsWith('-') && a !== '-') {
      throw new AnalysisError(`unknown option ${a}\n${USAGE}`, 'USAGE');
    } else paths.push(a);
  }
  if (paths.length > 1) throw new AnalysisError(`one transcript at a time\n${USAGE}`, 'USAGE');
  const file = paths.length ? resolve(paths[0]) : DEFAULT_TRANSCRIPT;
  const report = analyzeFile(file);
  console.log(json ? JSON.stringify(report, null, 2) : formatReport(report));
  return 0;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (e) {
  if (e instanceof AnalysisError) {
    console.error(`analyze: ${e.message}`);
    process.exitCode = 2;
  } else {
    throw e;
  }
}
