import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';

/** Debian's Chromium (`apt-get install -y chromium`; .ci/run installs it); CHROMIUM_PATH points elsewhere. */
export const CHROMIUM_PATH = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

/**
 * `withBrowser`: `it` for a spec that drives a real browser. Without Chromium such a spec is skipped on a
 * developer's machine, but MUST NOT be in CI (CI=true): there it runs and fails, so a browser
 * check never passes by not running.
 */
export const browserSpecsRun: boolean = fs.existsSync(CHROMIUM_PATH) || process.env['CI'] === 'true';
export const withBrowser = (name: string, fn: jest.ProvidesCallback, timeout?: number): void =>
  // Chosen when called, inside a spec: this module is also loaded outside jest (probe, fuzz,
  // benchmarks), where `it` does not exist.
  (browserSpecsRun ? it : it.skip)(name, fn, timeout);

/** Flags for a headless Chromium in a container: no sandbox, GPU, background traffic or first-run pages. */
export const CHROMIUM_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

/** One headless Chromium for a spec file (launch in beforeAll, close in afterAll). */
export async function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM_PATH))
    throw new Error(`no Chromium at ${CHROMIUM_PATH}: apt-get install -y chromium, or set CHROMIUM_PATH`);
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [...CHROMIUM_ARGS],
  });
}

/** Where a browser spec writes its screenshots: docs/img when SCREENSHOTS=1 (`npm run screenshots`), else nowhere. */
export function screenshotPath(name: string): string | undefined {
  return process.env['SCREENSHOTS'] === '1' ? path.join(ROOT, 'docs/img', `${name}.png`) : undefined;
}

const ROOT = path.resolve(__dirname, '../../../..');

/**
 * Builds the browser pages (`/verify`, `/explorer`) into dist/pages, as `npm run build` does:
 * the apps serve them from there. A spec that loads a page calls this first (well under a second);
 * the files are replaced atomically, so specs building at once do not disturb each other.
 */
export function buildPages(): void {
  execFileSync(process.execPath, [path.join(ROOT, 'tools/build/pages.mjs')], { cwd: ROOT, stdio: 'pipe' });
}

/**
 * For a spec file that loads the pages, in its beforeAll: builds them and, where browser specs run,
 * launches the one Chromium of the file (undefined elsewhere; `withBrowser` tests do not run there).
 */
export async function pagesAndBrowser(): Promise<Browser> {
  buildPages();
  return (browserSpecsRun ? await launchChromium() : undefined) as Browser;
}
