import fs from 'node:fs';
import path from 'node:path';

/**
 * Where `npm run build` puts the browser pages (tools/build/pages.mjs): dist/pages/. From the
 * build (this file at dist/libs/shared/http/src) that is four levels up; from the sources (tsx,
 * jest) it is the repository's dist/pages.
 */
export function builtPagesDir(): string {
  const built = path.resolve(__dirname, '../../../../pages');
  const fromSources = path.resolve(__dirname, '../../../../dist/pages');
  return fs.existsSync(built) ? built : fromSources;
}

/**
 * A built page's HTML (`verify`, `explorer`), read from disk on each call (it is small and rarely
 * asked for; a rebuild is served without a restart); undefined when the pages were not built.
 */
export function readBuiltPage(name: 'verify' | 'explorer'): string | undefined {
  try {
    return fs.readFileSync(path.join(builtPagesDir(), `${name}.html`), 'utf8');
  } catch {
    return undefined;
  }
}

/** Headers of a built page: no caching surprises, no framing, no sniffing. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-cache',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};
