import fs from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { BsvSpvCodec } from '@proofline/chain-bsv';
import { Receipt } from '@proofline/records-domain';
import { verifyReceipt } from '@proofline/records-feature';
import { createLogger } from '@proofline/shared-logger';
import { eventually, pagesAndBrowser, screenshotPath, withBrowser } from '@proofline/shared-testing';
import { startGraphQLServer } from './server';
import type { RunningGraphQL } from './server';
import { startGraphQL } from './testing/fixture';
import type { GraphQLFixture } from './testing/fixture';

const caller = { tenant: 'default' };

// A real three-version chain on the devnet (mined only when the spec says so), explored in
// headless Chromium through the GraphQL app's own /explorer page; nothing else is reachable.
jest.setTimeout(120_000);

describe('/explorer: a chain, its blocks and live confirmations in the browser', () => {
  let f: GraphQLFixture;
  let running: RunningGraphQL;
  let base: string;
  let browser: Browser;
  let key: string;
  const versions: string[] = [];

  async function state(txId: string): Promise<{ publication: string; confirmed: number }> {
    const s = await f.deps.records.status('linked', txId);
    return { publication: s.publication, confirmed: s.confirmation?.confirmedBlocks ?? 0 };
  }
  /** The hash of the block holding `txId` (as status reports it). */
  const blocks = new Map<string, string>();
  function blockOf(txId: string): string {
    return blocks.get(txId) ?? `(no block of ${txId})`;
  }
  async function mine(): Promise<void> {
    await f.dev.node.mineBlock();
  }

  beforeAll(async () => {
    browser = await pagesAndBrowser();
    f = await startGraphQL({ BLOCK_INTERVAL_MS: '3600000' }, undefined, { publish: true, fund: 20 });
    key = (await f.seedKey({ permissions: ['Verifier_User'] })).rawKey;
    await f.startChain();
    running = await startGraphQLServer(f.deps, f.config, createLogger({ level: 'silent', name: 'test' }), 0);
    base = `http://127.0.0.1:${running.port}`;
    // create and update: mined; the second update: published, not mined yet.
    const created = await f.writer.createLinked(caller, {
      body: Buffer.from('minutes, first draft'),
      encode: 'Base64',
    });
    versions.push(created.txId);
    await eventually(async () => (await state(created.txId)).publication === 'published', 15_000);
    await mine();
    await eventually(async () => (await state(created.txId)).confirmed >= 1, 15_000);
    await noteBlock(created.txId);
    let token = created.updateToken;
    for (const body of ['minutes, second draft', 'minutes, as approved']) {
      const prev = versions[versions.length - 1] as string;
      const next = await f.writer.updateLinked(caller, prev, {
        body: Buffer.from(body),
        encode: 'Base64',
        updateToken: token,
      });
      token = next.updateToken;
      versions.push(next.txId);
      await eventually(async () => (await state(next.txId)).publication === 'published', 15_000);
      if (versions.length === 2) {
        await mine();
        await eventually(async () => (await state(next.txId)).confirmed >= 1, 15_000);
        await noteBlock(next.txId);
      }
    }
  });
  afterAll(async () => {
    await browser?.close();
    await running?.close(0);
    await f?.close();
  });

  async function noteBlock(txId: string): Promise<void> {
    const hash = (await f.deps.records.status('linked', txId)).confirmation?.blockHash;
    if (hash) blocks.set(txId, hash);
  }

  /** A new page on /explorer with the spec's key typed into its labelled field and submitted by keyboard. */
  async function openWithKey(context: BrowserContext): Promise<Page> {
    const page = await context.newPage();
    await page.goto(`${base}/explorer`);
    await page.getByLabel('API key').focus();
    await page.keyboard.type(key);
    await page.keyboard.press('Enter');
    return page;
  }

  async function statusOf(page: Page, txId: string): Promise<{ confirmed: string; text: string }> {
    const item = page.locator(`#timeline li[data-txid="${txId}"]`);
    return {
      confirmed: (await item.getAttribute('data-confirmed')) ?? '',
      text: (await item.locator('[data-field="confirmations"]').textContent()) ?? '',
    };
  }

  withBrowser(
    'walks a three-version chain by keyboard, downloads a receipt that verifies, and shows a confirmation arriving',
    async () => {
      const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1100, height: 1000 } });
      const external: string[] = [];
      await context.route('**/*', async (route) => {
        const url = route.request().url();
        if (url.startsWith(base)) return route.continue();
        external.push(url);
        return route.abort();
      });
      try {
        // Labelled controls, used by keyboard alone.
        const page = await openWithKey(context);
        await page.getByLabel('Record txId').focus();
        await page.keyboard.type(versions[0] as string);
        await page.keyboard.press('Enter');
        await page.waitForSelector('#timeline li:nth-child(3)');

        // The key is in this tab's sessionStorage only: not in the URL, no cookie, not in the field.
        expect(await page.evaluate(() => sessionStorage.getItem('proofline.explorer.apiKey'))).toBe(key);
        expect(page.url()).not.toContain(key);
        expect(await context.cookies()).toEqual([]);
        expect(await page.inputValue('#key')).toBe('');

        const order = await page.$$eval('#timeline li', (lis) => lis.map((li) => li.getAttribute('data-txid')));
        expect(order).toEqual(versions);
        const headings = await page.$$eval('#timeline h3', (hs) => hs.map((h) => h.textContent ?? ''));
        expect(headings[0]).toMatch(/^Version 1 · create/);
        expect(headings[1]).toMatch(/^Version 2 · update/);
        expect(headings[2]).toMatch(/^Version 3 · update/);
        expect(await statusOf(page, versions[0] as string)).toEqual({ confirmed: 'true', text: '2 confirmations' });
        expect(await statusOf(page, versions[1] as string)).toEqual({ confirmed: 'true', text: '1 confirmation' });
        expect(await statusOf(page, versions[2] as string)).toEqual({ confirmed: 'false', text: 'not mined yet' });
        // Content previews: the bytes on chain (Base64 of the body).
        expect(await page.locator(`#timeline li[data-txid="${versions[2]}"] pre`).textContent()).toBe(
          Buffer.from('minutes, as approved').toString('base64'),
        );
        // The two blocks holding the mined versions.
        expect(await page.locator('#blocks-table tbody tr').count()).toBe(2);
        // Your blocks (the key's tenant's blocks, newest first): the same two.
        await page.waitForSelector('#mine-list > li:nth-child(2)');
        expect(await page.$$eval('#mine-list > li', (lis) => lis.map((li) => li.getAttribute('data-hash')))).toEqual(
          [versions[1], versions[0]].map((v) => blockOf(v as string)),
        );

        // The receipt of version 1 downloads and verifies with the service's own checks.
        const downloaded = page.waitForEvent('download');
        await page.getByRole('button', { name: 'Download the receipt of version 1 · create' }).click();
        const file = await (await downloaded).path();
        const receipt = Receipt.parse(JSON.parse(fs.readFileSync(file, 'utf8')));
        expect(receipt.txId).toBe(versions[0]);
        const verdict = await verifyReceipt(receipt, {
          spv: new BsvSpvCodec(),
          content: Buffer.from('minutes, first draft'),
        });
        expect(verdict).toMatchObject({ valid: true });
        expect(
          await page.getByRole('button', { name: 'Download the receipt of version 3 · update' }).isDisabled(),
        ).toBe(true);

        // A block arrives: version 3's confirmation is pushed over the subscription.
        await mine();
        await page.waitForSelector(`#timeline li[data-txid="${versions[2]}"][data-confirmed="true"]`, {
          timeout: 30_000,
        });
        await noteBlock(versions[2] as string);
        expect(await statusOf(page, versions[2] as string)).toEqual({ confirmed: 'true', text: '1 confirmation' });
        expect(await page.textContent('#live')).toMatch(/confirmation/);
        // The blocks table is rebuilt after the announcement (it reads the new block first).
        await page.waitForSelector('#blocks-table tbody tr:nth-child(3)');
        expect(await page.locator('#blocks-table tbody tr').count()).toBe(3);
        expect(await page.getByRole('button', { name: 'Download the receipt of version 3 · update' }).isEnabled()).toBe(
          true,
        );
        // Your blocks follows: the new block on top.
        await page.waitForSelector(`#mine-list > li:first-child[data-hash="${blockOf(versions[2] as string)}"]`);
        expect(await page.locator('#mine-list > li').count()).toBe(3);

        // Readable on a phone: nothing wider than the screen.
        await page.setViewportSize({ width: 375, height: 800 });
        expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
        expect(external).toEqual([]);
      } finally {
        await context.close();
      }
    },
  );

  withBrowser(
    "Your blocks: the tenant's blocks newest first; a block opens to its records, each a link to its chain",
    async () => {
      const context = await browser.newContext({ viewport: { width: 1100, height: 1000 } });
      try {
        const page = await openWithKey(context);
        const section = page.getByRole('region', { name: 'Your blocks' });
        await page.waitForSelector('#mine-list > li:nth-child(3)');
        // Newest first: the blocks of versions 3, 2 and 1, one record of this tenant in each.
        const hashes = [versions[2], versions[1], versions[0]].map((v) => blockOf(v as string));
        expect(await page.$$eval('#mine-list > li', (lis) => lis.map((li) => li.getAttribute('data-hash')))).toEqual(
          hashes,
        );
        const heights = await page.$$eval('#mine-list > li', (lis) => lis.map((li) => Number(li.dataset['height'])));
        expect(heights).toEqual([...heights].sort((a, b) => b - a));
        expect(await section.locator('#mine-summary').textContent()).toMatch(/^3 blocks hold your records/);
        const oldest = section.getByRole('button', { name: new RegExp(`^Height ${heights[2]} `) });
        expect(await oldest.textContent()).toContain('1 of your records · 3 confirmations');
        expect(await oldest.textContent()).toContain(hashes[2]);
        expect(await oldest.getAttribute('aria-expanded')).toBe('false');

        // By keyboard: open the oldest block; its one record is version 1, a link to its chain.
        await oldest.focus();
        await page.keyboard.press('Enter');
        expect(await oldest.getAttribute('aria-expanded')).toBe('true');
        const list = page.getByRole('list', { name: `Your records in the block at height ${heights[2]}` });
        const link = list.getByRole('link', { name: /^Version 1 · create/ });
        await link.waitFor();
        expect(await list.getByRole('link').count()).toBe(1);
        expect(await link.getAttribute('href')).toBe(`#tx=${versions[0]}`);
        expect(await page.textContent('#live')).toBe(
          '1 of your records in the block at height ' + String(heights[2]) + '.',
        );
        await page.keyboard.press('Tab');
        expect(await page.evaluate(() => document.activeElement?.getAttribute('data-txid'))).toBe(versions[0]);
        await page.keyboard.press('Enter');
        await page.waitForSelector(`#timeline li[aria-current="true"][data-txid="${versions[0]}"]`);
        expect(await page.locator('#timeline li').count()).toBe(3);
        // Focus moves to the record once the view is complete.
        await page.waitForFunction(() => document.activeElement?.id === 'record-title');
        // The txId is in the fragment (never sent anywhere); the key is not in the URL.
        expect(new URL(page.url()).hash).toBe(`#tx=${versions[0]}`);
        expect(page.url()).not.toContain(key);

        // The newest block lists version 3 too; closing a block hides its list.
        const newest = section.getByRole('button', { name: new RegExp(`^Height ${heights[0]} `) });
        await newest.click();
        await section.getByRole('link', { name: /^Version 3 · update/ }).waitFor();
        const shot = screenshotPath('explorer');
        if (shot) await page.screenshot({ path: shot, fullPage: true });
        await oldest.click();
        expect(await oldest.getAttribute('aria-expanded')).toBe('false');
        expect(await list.isHidden()).toBe(true);

        // A page opened on the fragment shows that record (the key is already in this tab).
        const second = await context.newPage();
        await second.goto(`${base}/explorer#tx=${versions[1]}`);
        expect(await second.evaluate(() => sessionStorage.getItem('proofline.explorer.apiKey'))).toBeNull();
        await page.goto(`${base}/explorer#tx=${versions[1]}`);
        await page.waitForSelector(`#timeline li[aria-current="true"][data-txid="${versions[1]}"]`);

        // Readable on a phone, a block open.
        await newest.click().catch(() => undefined);
        await page.setViewportSize({ width: 375, height: 800 });
        expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      } finally {
        await context.close();
      }
    },
  );

  withBrowser('a malformed txId or a wrong key is said in the status line, and no record is shown', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${base}/explorer`);
      await page.fill('#key', 'idty_not_a_key');
      await page.press('#key', 'Enter');
      await page.fill('#txid', 'nope');
      await page.press('#txid', 'Enter');
      expect(await page.textContent('#status')).toContain('64 hex characters');
      await page.fill('#txid', versions[0] as string);
      await page.press('#txid', 'Enter');
      await page.waitForSelector('#status.error');
      expect(await page.textContent('#status')).toMatch(/API_KEY_/);
      expect(await page.isHidden('#record')).toBe(true);
      expect(await page.isHidden('#chain')).toBe(true);
    } finally {
      await context.close();
    }
  });

  it('GET /explorer is one self-contained HTML page; GraphiQL names it', async () => {
    const res = await fetch(`${base}/explorer`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).not.toMatch(/<script[^>]+src=/i);
    expect(html).toContain('Content-Security-Policy');
    const graphiql = await (await fetch(`${base}/graphql`, { headers: { accept: 'text/html' } })).text();
    expect(graphiql).toContain('/explorer');
  });
});
