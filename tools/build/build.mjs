#!/usr/bin/env node
/**
 * `npm run build`: compiles every app (apps/<name>/src/main.ts) to one CommonJS bundle per app,
 * dist/apps/<name>/main.js, with esbuild. Workspace libs (@proofline/*, through the tsconfig
 * paths) are bundled in; everything under node_modules stays external and is loaded by `node`
 * at run time from the production dependencies.
 *
 * Files the sources read from disk next to themselves (Lua scripts, schema.graphql, the root
 * package.json for the version) are copied into dist/ at their source-relative places, and
 * `__dirname` in a workspace source file is compiled to that file's mirrored directory under
 * dist/ (see dirnamePlugin): `path.join(__dirname, 'lua')` in
 * libs/records/data-access/src/record-store.ts reads dist/libs/records/data-access/src/lua.
 * The browser pages are built by tools/build/pages.mjs into dist/pages/.
 * dist/ is self-contained apart from node_modules.
 *
 *   node tools/build/build.mjs             build
 *   node tools/build/build.mjs --if-stale  build only when dist/ is missing or older than a
 *                                          source (newest mtime under apps/ libs/ tools/build
 *                                          and the package manifests, against dist/.build-stamp)
 *   --out <dir>                            build into <dir> instead of dist/ (tests); it must be
 *                                          inside the repository so node_modules resolves
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildPages } from './pages.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DEFAULT_DIST = path.join(ROOT, 'dist');
const stampOf = (dist) => path.join(dist, '.build-stamp');
const SOURCES = ['apps', 'libs', 'tools/build', 'package.json', 'package-lock.json', 'tsconfig.base.json'];
/** Non-TypeScript files under a src/ directory that code reads at run time. */
const ASSET = /\.(lua|graphql|json|html|css|txt)$/;

function newestMtime(p) {
  let stat;
  try {
    stat = fs.statSync(p);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of fs.readdirSync(p, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    newest = Math.max(newest, newestMtime(path.join(p, entry.name)));
  }
  return newest;
}

/** True when dist/ was built after the newest source change. */
export function isFresh(dist = DEFAULT_DIST) {
  const stamp = newestMtime(stampOf(dist));
  if (stamp === 0) return false;
  return SOURCES.every((s) => newestMtime(path.join(ROOT, s)) <= stamp);
}

function apps() {
  return fs
    .readdirSync(path.join(ROOT, 'apps'), { withFileTypes: true })
    .filter((d) => d.isDirectory() && fs.existsSync(path.join(ROOT, 'apps', d.name, 'src', 'main.ts')))
    .map((d) => d.name)
    .sort();
}

/** Every asset file under apps/<x>/src and libs/<group>/<lib>/src, relative to ROOT. */
function assets() {
  const out = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = path.join(dir, e.name);
      if (e.isDirectory()) walk(rel);
      else if (ASSET.test(e.name)) out.push(rel);
    }
  };
  for (const app of apps()) walk(path.join('apps', app, 'src'));
  for (const group of fs.readdirSync(path.join(ROOT, 'libs'))) {
    for (const lib of fs.readdirSync(path.join(ROOT, 'libs', group))) {
      if (fs.existsSync(path.join(ROOT, 'libs', group, lib, 'src'))) walk(path.join('libs', group, lib, 'src'));
    }
  }
  // Read by apps/graphql/src/print-schema.ts (`path.join(__dirname, '..', 'schema.graphql')`).
  if (fs.existsSync(path.join(ROOT, 'apps/graphql/schema.graphql'))) out.push('apps/graphql/schema.graphql');
  return out;
}

/**
 * Compiles `__dirname` in a workspace source file to the directory that file's assets are
 * copied to under dist/, relative to the bundle that runs it (dist/apps/<name>/main.js).
 * Line numbers are kept, so source maps stay exact.
 */
const dirnamePlugin = (DIST) => ({
  name: 'proofline-dirname',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      const rel = path.relative(ROOT, args.path);
      if (rel.startsWith('..') || rel.includes('node_modules')) return undefined;
      let contents = await fs.promises.readFile(args.path, 'utf8');
      if (/\b__dirname\b/.test(contents)) {
        const fromBundle = path
          .relative(path.join(DIST, 'apps', '_'), path.join(DIST, path.dirname(rel)))
          .split(path.sep)
          .join('/');
        contents = contents.replace(
          /\b__dirname\b/g,
          `require('node:path').join(__dirname, ${JSON.stringify(fromBundle)})`,
        );
      }
      return { contents, loader: 'ts' };
    });
  },
});

export async function build({ dist: DIST = DEFAULT_DIST, quiet = false } = {}) {
  const esbuild = await import('esbuild');
  const started = Date.now();
  const names = apps();
  // A fresh tree: no stale bundle of a removed app, no asset a source no longer has.
  fs.rmSync(path.join(DIST, 'apps'), { recursive: true, force: true });
  fs.rmSync(path.join(DIST, 'libs'), { recursive: true, force: true });
  await Promise.all(
    names.map((name) =>
      esbuild.build({
        absWorkingDir: ROOT,
        entryPoints: [path.join(ROOT, 'apps', name, 'src', 'main.ts')],
        outfile: path.join(DIST, 'apps', name, 'main.js'),
        bundle: true,
        platform: 'node',
        target: 'node20',
        format: 'cjs',
        packages: 'external',
        tsconfig: path.join(ROOT, 'tsconfig.base.json'),
        sourcemap: true,
        sourcesContent: false,
        logLevel: 'warning',
        plugins: [dirnamePlugin(DIST)],
      }),
    ),
  );
  // The browser pages (/verify, /explorer): self-contained HTML files in dist/pages.
  await buildPages({ out: path.join(DIST, 'pages') });
  for (const rel of assets()) {
    fs.mkdirSync(path.dirname(path.join(DIST, rel)), { recursive: true });
    fs.copyFileSync(path.join(ROOT, rel), path.join(DIST, rel));
  }
  // libs/shared/config/src/version.ts reads <its dir>/../../../../package.json: dist/package.json.
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  fs.writeFileSync(
    path.join(DIST, 'package.json'),
    `${JSON.stringify({ name: `${pkg.name}-dist`, version: pkg.version, private: true, type: 'commonjs' }, null, 2)}\n`,
  );
  fs.writeFileSync(stampOf(DIST), `${new Date().toISOString()}\n`);
  if (!quiet)
    console.log(
      `proofline build: ${names.join(', ')} -> ${path.relative(ROOT, DIST) || '.'}/apps/<name>/main.js in ${Date.now() - started} ms`,
    );
}

const invoked = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invoked) {
  const args = process.argv.slice(2);
  const out = args.indexOf('--out');
  const dist = out >= 0 && args[out + 1] ? path.resolve(args[out + 1]) : DEFAULT_DIST;
  if (args.includes('--if-stale') && isFresh(dist)) process.exit(0);
  build({ dist }).catch((err) => {
    console.error(`proofline build failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
