/**
 * The browser pages, built by `npm run build` into dist/pages/ (tools/build/build.mjs calls
 * {@link buildPages}): `/verify` (apps/api/pages/verify.*) and `/explorer`
 * (apps/graphql/pages/explorer.*). Each page is ONE self-contained HTML file, its script and
 * stylesheet inline and nothing fetched from elsewhere, so it works with the network off once
 * loaded, saved to disk and opened from file://.
 *
 * The verifier bundles the service's own receipt checks (records-feature's verifyReceipt and the
 * chain-domain code it calls), not a copy. For the browser:
 *  - `node:crypto` is browser/node-crypto.mjs (SHA-256 from @bsv/sdk, pure JS and synchronous);
 *    other `node:*` imports are empty modules (code reaching one at run time fails loudly);
 *  - Node's global `Buffer` is the `buffer` package's (browser/buffer-global.mjs);
 *  - a lib whose index also exports I/O code is entered at the one file the pages use
 *    (BROWSER_ENTRIES): the verifier needs no Redis, BullMQ or native module.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The pages: name -> directory holding <name>.ts, <name>.html and <name>.css (after browser/base.css). */
export const PAGES = { verify: 'apps/api/pages', explorer: 'apps/graphql/pages' };

/** Library import -> the file the pages take from it (everything else in its index is server code). */
const BROWSER_ENTRIES = {
  '@proofline/records-feature': 'libs/records/feature/src/receipt-verify.ts',
  '@proofline/chain-bsv': 'libs/chain/bsv/src/spv-codec.ts',
  '@proofline/chain-arc': 'libs/chain/arc/src/headers-client.ts',
};

const browserPlugin = {
  name: 'proofline-browser',
  setup(build) {
    build.onResolve({ filter: /^@proofline\/(records-feature|chain-bsv|chain-arc)$/ }, (args) => ({
      path: path.join(ROOT, BROWSER_ENTRIES[args.path]),
    }));
    build.onResolve({ filter: /^(node:)?crypto$/ }, () => ({
      path: path.join(ROOT, 'tools/build/browser/node-crypto.mjs'),
    }));
    build.onResolve({ filter: /^node:/ }, (args) => ({ path: args.path, namespace: 'node-empty' }));
    build.onLoad({ filter: /.*/, namespace: 'node-empty' }, () => ({ contents: 'export default {};', loader: 'js' }));
  },
};

/** `</script` cannot appear inside an inline script. */
const inlineSafe = (js) => js.replace(/<\/(script)/gi, '<\\/$1');

/**
 * Builds every page into `out` (default dist/pages) as <name>.html. Files are written to a
 * temporary name and renamed, so a concurrent reader never sees half a page.
 */
export async function buildPages({ out = path.join(ROOT, 'dist', 'pages'), quiet = true } = {}) {
  const esbuild = await import('esbuild');
  fs.mkdirSync(out, { recursive: true });
  const started = Date.now();
  for (const [name, dir] of Object.entries(PAGES)) {
    const result = await esbuild.build({
      absWorkingDir: ROOT,
      entryPoints: [path.join(ROOT, dir, `${name}.ts`)],
      bundle: true,
      write: false,
      platform: 'browser',
      format: 'iife',
      target: 'es2022',
      minify: true,
      legalComments: 'none',
      tsconfig: path.join(ROOT, 'tsconfig.base.json'),
      inject: [path.join(ROOT, 'tools/build/browser/buffer-global.mjs')],
      define: { 'process.env.NODE_ENV': '"production"', global: 'globalThis' },
      logLevel: 'warning',
      plugins: [browserPlugin],
    });
    const js = inlineSafe(result.outputFiles[0].text);
    const css =
      fs.readFileSync(path.join(ROOT, 'tools/build/browser/base.css'), 'utf8') +
      fs.readFileSync(path.join(ROOT, dir, `${name}.css`), 'utf8');
    const scriptHash = crypto.createHash('sha256').update(js).digest('base64');
    // Only this script runs; nothing is loaded from anywhere; fetch may go where the user points it.
    const csp = [
      "default-src 'none'",
      `script-src 'sha256-${scriptHash}'`,
      "style-src 'unsafe-inline'",
      'img-src data: blob:',
      "connect-src 'self' http: https:",
      "form-action 'none'",
      "base-uri 'none'",
    ].join('; ');
    const html = fs
      .readFileSync(path.join(ROOT, dir, `${name}.html`), 'utf8')
      .replace(
        '<!--HEAD-->',
        () =>
          `<meta charset="utf-8">\n    <meta name="viewport" content="width=device-width, initial-scale=1">\n    ` +
          `<meta http-equiv="Content-Security-Policy" content="${csp}">\n    <style>${css}</style>`,
      )
      .replace('<!--SCRIPT-->', () => `<script>${js}</script>`);
    const file = path.join(out, `${name}.html`);
    const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
    fs.writeFileSync(tmp, html);
    fs.renameSync(tmp, file);
  }
  if (!quiet)
    console.log(`proofline build: pages ${Object.keys(PAGES).join(', ')} -> ${out} in ${Date.now() - started} ms`);
}

// `node tools/build/pages.mjs [--out DIR]`: the pages alone (the browser specs build them so).
const invoked = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invoked) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--out');
  buildPages({ ...(at >= 0 && args[at + 1] ? { out: path.resolve(args[at + 1]) } : {}), quiet: false }).catch((err) => {
    console.error(`proofline pages build failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
