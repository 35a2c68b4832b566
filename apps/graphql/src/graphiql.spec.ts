import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { createLogger } from '@proofline/shared-logger';
import { CHROMIUM_ARGS, CHROMIUM_PATH as CHROMIUM, withBrowser } from '@proofline/shared-testing';
import { GRAPHIQL_HEADERS } from './app';
import { startGraphQLServer } from './server';
import type { RunningGraphQL } from './server';
import { startGraphQL } from './testing/fixture';
import type { GraphQLFixture } from './testing/fixture';

// The browser check runs where a Chromium is installed and always in CI (.ci/run installs it;
// `withBrowser` fails there rather than skip); CHROMIUM_PATH points elsewhere. The page checks below run everywhere.

describe('GraphiQL works offline: assets served by the app, ASCII headers, an example query', () => {
  let fx: GraphQLFixture;
  let running: RunningGraphQL;
  let base: string;
  beforeAll(async () => {
    fx = await startGraphQL({ HOST: '127.0.0.1' });
    running = await startGraphQLServer(fx.deps, fx.config, createLogger({ level: 'silent', name: 'test' }), 0);
    base = `http://127.0.0.1:${running.port}`;
  });
  afterAll(async () => {
    await running?.close(0);
    await fx?.close();
  });

  it('serves the page with every asset inline: no CDN script or stylesheet, ASCII headers, the example query', async () => {
    const res = await fetch(`${base}/graphql`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const html = await res.text();
    expect(html).not.toMatch(/<script[^>]+src=/i);
    expect(html).not.toMatch(/<link[^>]+href="https?:/i);
    expect(html).not.toContain('unpkg.com');
    expect(html).not.toContain('__TITLE__');
    expect(html).toContain('query Example');
    expect(GRAPHIQL_HEADERS).toMatch(/^[\x00-\x7f]*$/);
    expect(html).toContain(JSON.stringify(GRAPHIQL_HEADERS).slice(1, -1));
  });

  withBrowser(
    'renders in headless Chromium with no network, loads the schema and runs the example query',
    async () => {
      const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'graphiql-chromium-'));
      const context = await chromium.launchPersistentContext(userDataDir, {
        executablePath: CHROMIUM,
        headless: true,
        args: [...CHROMIUM_ARGS],
      });
      const external: string[] = [];
      const sentKeys: (string | undefined)[] = [];
      try {
        // Nothing leaves the machine: any request not to this server is refused and recorded.
        await context.route('**/*', async (route) => {
          const url = route.request().url();
          if (url.startsWith(base) || url.startsWith('blob:') || url.startsWith('data:')) {
            if (route.request().method() === 'POST') sentKeys.push(route.request().headers()['x-api-key']);
            await route.continue();
          } else {
            external.push(url);
            await route.abort();
          }
        });
        const page = context.pages()[0] ?? (await context.newPage());
        const schemaLoaded = page.waitForResponse(
          async (r) =>
            r.url().startsWith(`${base}/graphql`) &&
            r.request().method() === 'POST' &&
            (r.request().postData() ?? '').includes('__schema') &&
            r.status() === 200,
          { timeout: 60_000 },
        );
        await page.goto(`${base}/graphql`, { waitUntil: 'load', timeout: 60_000 });
        await page.waitForSelector('.graphiql-container', { timeout: 60_000 });
        const introspection = await schemaLoaded;
        expect(((await introspection.json()) as { data?: { __schema?: unknown } }).data?.__schema).toBeDefined();

        const ran = page.waitForResponse(
          async (r) => r.request().method() === 'POST' && (r.request().postData() ?? '').includes('Example'),
          { timeout: 30_000 },
        );
        await page.click('.graphiql-execute-button');
        expect(await (await ran).json()).toMatchObject({ data: { health: 'ok' } });
        await page.waitForFunction(
          () => (document.querySelector('.result-window')?.textContent ?? '').includes('"ok"'),
          undefined,
          { timeout: 30_000 },
        );
        await page.screenshot({ path: path.join(os.tmpdir(), 'proofline-graphiql.png') });
        expect(external).toEqual([]);
        // the ASCII placeholder was sent as typed (a non-ASCII value would have stopped fetch)
        expect(sentKeys).toContain('idty_REPLACE_WITH_YOUR_KEY');
      } finally {
        await context.close();
        fs.rmSync(userDataDir, { recursive: true, force: true });
      }
    },
    120_000,
  );
});
