// Every ```js (and ```ts) sample of the package README (docs/package-README.md, shipped as
// pkg/README.md) and of the repository README.md runs as a test against the built package, so
// that a README that lies fails CI.
//
// Each sample runs unchanged in its own Node process, in a scratch project whose node_modules
// holds the built package as `context-compaction` and the repository's dev dependencies; the
// provider packages a sample imports that are not dev dependencies (`@ai-sdk/openai`,
// `@ai-sdk/anthropic`, `@langchain/openai`, `tiktoken`) are stand-ins from
// helpers/readme-modules/. Names a sample uses without defining them (`messages`, `summarize`,
// `client`, …) come from helpers/readme-prelude.mjs: fakes, with a fake `fetch` speaking the
// Anthropic and OpenAI APIs. A sample preceded by `<!-- sample: not run — <reason> -->` is listed
// with its reason instead (keep those very few).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync, existsSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { REPO } from './helpers/support.mjs';

const READMES = ['docs/package-README.md', 'README.md'];
const STAND_INS = {
  '@ai-sdk/openai': 'ai-sdk-provider.mjs',
  '@ai-sdk/anthropic': 'ai-sdk-provider.mjs',
  '@langchain/openai': 'langchain-openai.mjs',
  tiktoken: 'tiktoken.mjs',
};

/** The fenced js/ts samples of a Markdown file: `{file, line, lang, code, skip?}`. */
export function extractSamples(file, text) {
  const lines = text.split('\n');
  const samples = [];
  for (let i = 0; i < lines.length; i += 1) {
    const open = /^```(js|ts|javascript|typescript)\s*$/.exec(lines[i]);
    if (!open) {
      if (/^```/.test(lines[i])) {
        // another language: skip to its closing fence
        for (i += 1; i < lines.length && !/^```\s*$/.test(lines[i]); i += 1);
      }
      continue;
    }
    let j = i - 1;
    while (j >= 0 && lines[j].trim() === '') j -= 1;
    const marker = j >= 0 ? /^<!--\s*sample:\s*not run\s*[—-]+\s*(.+?)\s*-->$/.exec(lines[j].trim()) : null;
    const start = i + 1;
    const body = [];
    for (i += 1; i < lines.length && !/^```\s*$/.test(lines[i]); i += 1) body.push(lines[i]);
    assert.ok(i < lines.length, `${file}:${start}: a code block is never closed`);
    samples.push({ file, line: start, lang: open[1], code: body.join('\n'), skip: marker?.[1] });
  }
  return samples;
}

/** The names a sample declares at its top level (imports, const/let/var, functions, classes). */
function declaredNames(code) {
  const sf = ts.createSourceFile('sample.ts', code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const names = new Set();
  const bind = (n) => {
    if (ts.isIdentifier(n)) names.add(n.text);
    else if (ts.isObjectBindingPattern(n) || ts.isArrayBindingPattern(n)) for (const e of n.elements) if (!ts.isOmittedExpression(e)) bind(e.name);
  };
  for (const s of sf.statements) {
    if (ts.isImportDeclaration(s) && s.importClause) {
      const c = s.importClause;
      if (c.name) names.add(c.name.text);
      if (c.namedBindings && ts.isNamespaceImport(c.namedBindings)) names.add(c.namedBindings.name.text);
      if (c.namedBindings && ts.isNamedImports(c.namedBindings)) for (const e of c.namedBindings.elements) names.add(e.name.text);
    } else if (ts.isVariableStatement(s)) {
      for (const d of s.declarationList.declarations) bind(d.name);
    } else if ((ts.isFunctionDeclaration(s) || ts.isClassDeclaration(s)) && s.name) {
      names.add(s.name.text);
    }
  }
  return names;
}

/** A scratch project: the built package, the dev dependencies, the stand-ins, the prelude, a session file. */
function scratchProject() {
  const dir = mkdtempSync(join(tmpdir(), 'cc-readme-samples-'));
  const nm = join(dir, 'node_modules');
  mkdirSync(nm);
  const devModules = realpathSync(join(REPO, 'node_modules'));
  for (const entry of readdirSync(devModules)) {
    if (entry.startsWith('.')) continue;
    if (entry.startsWith('@')) {
      mkdirSync(join(nm, entry));
      for (const sub of readdirSync(join(devModules, entry))) symlinkSync(join(devModules, entry, sub), join(nm, entry, sub));
    } else {
      symlinkSync(join(devModules, entry), join(nm, entry));
    }
  }
  symlinkSync(join(REPO, 'pkg'), join(nm, 'context-compaction'));
  const helpers = join(REPO, 'tests/node/helpers');
  cpSync(join(helpers, 'readme-prelude.mjs'), join(dir, 'readme-prelude.mjs'));
  cpSync(join(helpers, 'readme-modules'), join(dir, 'readme-modules'), { recursive: true });
  for (const [name, file] of Object.entries(STAND_INS)) {
    assert.ok(!existsSync(join(nm, name)), `${name} is installed now: drop its stand-in`);
    mkdirSync(join(nm, name), { recursive: true });
    writeFileSync(join(nm, name, 'package.json'), JSON.stringify({ name, type: 'module', main: 'index.mjs' }));
    writeFileSync(join(nm, name, 'index.mjs'), `export * from '../${name.startsWith('@') ? '../' : ''}../readme-modules/${file}';\n`);
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'readme-samples', private: true, type: 'module' }));
  // `session.jsonl` for the samples that read one: a short Claude Code transcript.
  const line = (o) => JSON.stringify({ parentUuid: null, isSidechain: false, sessionId: 's1', timestamp: '2026-01-01T00:00:00.000Z', ...o });
  writeFileSync(
    join(dir, 'session.jsonl'),
    [
      line({ type: 'user', uuid: 'u1', message: { role: 'user', content: 'Fix the parser.' } }),
      line({ type: 'assistant', uuid: 'a1', parentUuid: 'u1', message: { id: 'msg_1', role: 'assistant', model: 'claude-opus-4-6', content: [{ type: 'text', text: 'Fixed.' }], usage: { input_tokens: 1200, output_tokens: 30, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } } }),
    ].join('\n') + '\n',
  );
  return dir;
}

const samples = READMES.flatMap((f) => extractSamples(f, readFileSync(join(REPO, f), 'utf8')));
const PRELUDE_NAMES = readFileSync(join(REPO, 'tests/node/helpers/readme-prelude.mjs'), 'utf8');

test('both READMEs have samples, and very few are not run', () => {
  for (const f of READMES) assert.ok(samples.some((s) => s.file === f), `${f} has no js sample`);
  const notRun = samples.filter((s) => s.skip);
  for (const s of notRun) console.log(`not run: ${s.file}:${s.line} — ${s.skip}`);
  assert.ok(notRun.length <= 3, `${notRun.length} samples are not run`);
});

test('the samples extractor reads fences, languages and markers', () => {
  const got = extractSamples('x.md', 'a\n```sh\nls\n```\n<!-- sample: not run — needs a browser -->\n\n```js\nf();\n```\n```ts\nlet a: number = 1;\n```\n');
  assert.deepEqual(got.map((s) => [s.line, s.lang, s.code, s.skip]), [[7, 'js', 'f();', 'needs a browser'], [10, 'ts', 'let a: number = 1;', undefined]]);
});

const dir = scratchProject();
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
// The names the prelude offers, read from the world it builds (the first run lists them).
const listed = spawnSync(process.execPath, ['--input-type=module', '-e', "const { world } = await import('./readme-prelude.mjs'); console.log(JSON.stringify(Object.keys(await world())));"], { cwd: dir, encoding: 'utf8' });
assert.equal(listed.status, 0, listed.stderr);
const worldNames = JSON.parse(listed.stdout.trim().split('\n').pop());
assert.ok(PRELUDE_NAMES.length > 0);

for (const s of samples) {
  const name = `${s.file}:${s.line} runs`;
  if (s.skip) {
    test(name, { skip: `not run — ${s.skip}` }, () => {});
    continue;
  }
  test(name, () => {
    let code = s.code;
    if (s.lang === 'ts' || s.lang === 'typescript') {
      code = ts.transpileModule(code, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
    }
    const declared = declaredNames(code);
    const free = worldNames.filter((n) => !declared.has(n));
    const file = join(dir, `sample-${s.file.replace(/\W/g, '_')}-${s.line}.mjs`);
    writeFileSync(
      file,
      "import { world as __world } from './readme-prelude.mjs';\n" +
        `let { ${free.join(', ')} } = await __world();\n` +
        `// ---- ${s.file}:${s.line}\n${code}\n`,
    );
    const r = spawnSync(process.execPath, [file], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, `${s.file}:${s.line} failed (exit ${r.status}, signal ${r.signal}):\n${r.stderr.slice(-3000)}`);
  });
}

for (const readme of READMES) {
  test(`${readme}'s esbuild recipe (--loader:.wasm=file), bundled by esbuild, emits both .wasm files and gives the second one's URL to loadExtras`, async () => {
    const recipe = samples.find((s) => s.file === readme && s.code.includes('--loader:.wasm=file'));
    assert.ok(recipe, `${readme} has no esbuild recipe with --loader:.wasm=file`);
    assert.match(recipe.code, /import (\w+) from 'context-compaction\/context_compaction_extra_bg\.wasm'/);
    const extraName = /import (\w+) from 'context-compaction\/context_compaction_extra_bg\.wasm'/.exec(recipe.code)[1];
    assert.match(recipe.code, new RegExp(`loadExtras\\(\\{ module_or_path: new URL\\(${extraName}, import\\.meta\\.url\\) \\}\\)`));
    const { build } = await import('esbuild');
    const stem = readme.replace(/\W+/g, '-');
    const app = join(dir, `esbuild-recipe-${stem}.mjs`);
    writeFileSync(app, `const messages = [{ role: 'user', content: 'hello' }];\n${recipe.code}\n`);
    const outdir = join(dir, `esbuild-recipe-out-${stem}`);
    await build({ entryPoints: [app], bundle: true, format: 'esm', splitting: true, platform: 'browser', loader: { '.wasm': 'file' }, outdir, logLevel: 'error' });
    const wasm = readdirSync(outdir).filter((f) => f.endsWith('.wasm')).sort();
    assert.deepEqual(wasm.map((f) => f.replace(/-[A-Z0-9]+\.wasm$/, '.wasm')), ['context_compaction_bg.wasm', 'context_compaction_extra_bg.wasm']);
  });
}
