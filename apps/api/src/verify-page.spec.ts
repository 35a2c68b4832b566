import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { eventually, pagesAndBrowser, screenshotPath, withBrowser } from '@proofline/shared-testing';
import { startRecordsFixture } from './testing/records-fixture';
import type { RecordsFixture } from './testing/records-fixture';

const ROOT = path.resolve(__dirname, '../../..');

interface ReceiptJson {
  txId: string;
  rawTx: string;
  blockHeader: string;
  merkleProof: { nodes: string[] };
  [field: string]: unknown;
}

/** Flips the low bit of byte `at` of `hex`. */
function flipByte(hex: string, at: number): string {
  const b = Buffer.from(hex, 'hex');
  b[at] = (b[at] as number) ^ 0x01;
  return b.toString('hex');
}

// A real receipt from the devnet (write, publish, mine), checked in headless Chromium by the page
// `npm run build` makes, with the network blocked once the page has loaded.
jest.setTimeout(120_000);

describe('/verify: the receipt verifier in the browser, offline', () => {
  let f: RecordsFixture;
  let browser: Browser;
  let receipt: ReceiptJson;
  const content = Buffer.from('the minutes of the 2026 board meeting');
  const encode = 'SHA256(pepper)|Base64';

  beforeAll(async () => {
    browser = await pagesAndBrowser();
    f = await startRecordsFixture();
    f.startPublisher();
    const res = await f.request('POST', `/api/v1/records?encode=${encodeURIComponent(encode)}`, { body: content });
    expect(res.status).toBe(200);
    const { txId } = (await res.json()) as { txId: string };
    await eventually(async () => (await f.store.state(txId)) === 'published', 15_000);
    await f.produceBlock();
    const got = await f.request('GET', `/api/v1/records/${txId}/receipt`);
    expect(got.status).toBe(200);
    receipt = (await got.json()) as ReceiptJson;
  });
  afterAll(async () => {
    await browser?.close();
    await f?.close();
  });

  /** A fresh context whose network is cut once the page is loaded: nothing but the page itself. */
  async function offlinePage(url: string): Promise<{ context: BrowserContext; page: Page; external: string[] }> {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'load' });
    const external: string[] = [];
    await context.route('**/*', async (route) => {
      external.push(route.request().url());
      await route.abort();
    });
    await context.setOffline(true);
    return { context, page, external };
  }

  async function verify(
    page: Page,
    r: unknown,
    file: Buffer | undefined,
    encodeString = encode,
  ): Promise<Record<string, string>> {
    await page.setInputFiles('#receipt', {
      name: 'receipt.json',
      mimeType: 'application/json',
      buffer: Buffer.from(JSON.stringify(r, null, 2)),
    });
    if (file) await page.setInputFiles('#content', { name: 'minutes.txt', mimeType: 'text/plain', buffer: file });
    await page.fill('#encode', encodeString);
    await page.click('#verify');
    await page.waitForSelector('#steps li[data-check="HEADERS_SOURCE"]');
    const rows = await page.$$eval('#steps li', (lis) =>
      lis.map((li) => [(li as HTMLElement).dataset['check'] ?? '', (li as HTMLElement).dataset['status'] ?? '']),
    );
    return Object.fromEntries(rows);
  }

  withBrowser(
    'passes a real receipt and its file: every step, the values compared, the Merkle path drawn',
    async () => {
      const { context, page, external } = await offlinePage(`${f.base}/verify`);
      try {
        expect(await verify(page, receipt, content)).toEqual({
          RECEIPT: 'passed',
          TX_ID: 'passed',
          BLOCK_HASH: 'passed',
          PROOF_OF_WORK: 'passed',
          MERKLE_PROOF: 'passed',
          BEEF: 'passed',
          CONTENT: 'passed',
          HEADERS_SOURCE: 'skipped',
        });
        expect(await page.textContent('#summary')).toContain(`Verified: records ${receipt.txId}`);
        // The txId step shows both values, equal.
        const txStep = (await page.textContent('#steps li[data-check="TX_ID"]')) ?? '';
        expect(txStep.split(receipt.txId).length - 1).toBe(2);
        expect(txStep).toContain('✓ equal');
        // One row per proof node, and the root row: computed root equals the header's.
        expect(await page.locator('#merkle li').count()).toBe(receipt.merkleProof.nodes.length + 1);
        expect(await page.textContent('#merkle li.root')).toContain('✓ equal');
        const shot = screenshotPath('verify');
        if (shot) await page.screenshot({ path: shot, fullPage: true });
        expect(external).toEqual([]);
      } finally {
        await context.close();
      }
    },
  );

  withBrowser(
    'fails a changed byte in the file, the transaction, a proof node, the header: the right step each',
    async () => {
      const { context, page, external } = await offlinePage(`${f.base}/verify`);
      try {
        // A proof node that is a hash (not the "*" of an odd level's duplicate).
        const at = receipt.merkleProof.nodes.findIndex((n) => n !== '*');
        expect(at).toBeGreaterThanOrEqual(0);
        const nodes = [...receipt.merkleProof.nodes];
        nodes[at] = flipByte(nodes[at] as string, 3);
        const changedFile = Buffer.from(content);
        changedFile[4] = (changedFile[4] as number) ^ 0x01;
        const cases: [string, unknown, Buffer | undefined][] = [
          ['CONTENT', receipt, changedFile],
          ['TX_ID', { ...receipt, rawTx: flipByte(receipt.rawTx, 10) }, content],
          ['MERKLE_PROOF', { ...receipt, merkleProof: { ...receipt.merkleProof, nodes } }, content],
          ['BLOCK_HASH', { ...receipt, blockHeader: flipByte(receipt.blockHeader, 70) }, content],
        ];
        for (const [failed, r, file] of cases) {
          const steps = await verify(page, r, file);
          expect(steps[failed]).toBe('failed');
          // Every step before the failed one passed; every one after it did not run.
          const order = Object.keys(steps);
          const failedAt = order.indexOf(failed);
          expect(order.slice(0, failedAt).every((c) => steps[c] === 'passed')).toBe(true);
          expect(order.slice(failedAt + 1).every((c) => steps[c] === 'not-run')).toBe(true);
          expect(await page.textContent(`#steps li[data-check="${failed}"]`)).toContain('✗ differ');
          expect(await page.textContent('#summary')).toContain('Not verified');
        }
        expect(external).toEqual([]);
      } finally {
        await context.close();
      }
    },
  );

  withBrowser('takes both files dropped on the page and verifies at once', async () => {
    const { context, page, external } = await offlinePage(`${f.base}/verify`);
    try {
      await page.fill('#encode', encode);
      const dropped = await page.evaluateHandle(
        ({ json, text }) => {
          const data = new DataTransfer();
          data.items.add(new File([text], 'minutes.txt', { type: 'text/plain' }));
          data.items.add(new File([json], 'receipt.json', { type: 'application/json' }));
          return data;
        },
        { json: JSON.stringify(receipt), text: content.toString('utf8') },
      );
      await page.dispatchEvent('#drop', 'drop', { dataTransfer: dropped });
      await page.waitForSelector('#steps li[data-check="CONTENT"][data-status="passed"]');
      expect(await page.textContent('#receipt-name')).toBe('receipt.json');
      expect(await page.textContent('#content-name')).toBe('minutes.txt');
      expect(await page.textContent('#summary')).toContain('Verified');
      expect(external).toEqual([]);
    } finally {
      await context.close();
    }
  });

  withBrowser(
    'checks the block online with the headers source the user names, and fails where it is unknown',
    async () => {
      const headersUrl = f.dev.env['HEADERS_URL'] as string;
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        await page.goto(`${f.base}/verify`);
        // The devnet node's own answers, with the CORS header a public headers service sends;
        // `unknown` answers 404 for every block.
        const asked: string[] = [];
        await context.route('**/*', async (route) => {
          const url = route.request().url();
          const cors = { 'access-control-allow-origin': '*' };
          if (url.startsWith(`${headersUrl}/`)) {
            asked.push(url);
            const res = await fetch(url);
            return route.fulfill({
              status: res.status,
              headers: { ...cors, 'content-type': 'application/json' },
              body: await res.text(),
            });
          }
          if (url.startsWith('http://unknown.invalid/')) return route.fulfill({ status: 404, headers: cors, body: '' });
          return route.abort();
        });
        await page.check('#online');
        await page.fill('#headers-url', headersUrl);
        expect(await verify(page, receipt, content)).toMatchObject({ CONTENT: 'passed', HEADERS_SOURCE: 'passed' });
        expect(asked.some((u) => u.includes(receipt['blockHash'] as string))).toBe(true);
        expect(await page.textContent('#steps li[data-check="HEADERS_SOURCE"]')).toContain('✓ equal');

        await page.fill('#headers-url', 'http://unknown.invalid/v1/bsv/main');
        const steps = await verify(page, receipt, content);
        expect(steps).toMatchObject({ CONTENT: 'passed', HEADERS_SOURCE: 'failed' });
        expect(await page.textContent('#steps li[data-check="HEADERS_SOURCE"]')).toContain('does not know block');
      } finally {
        await context.close();
      }
    },
  );

  withBrowser('works saved to disk: the built file opened from file:// with no network at all', async () => {
    const context = await browser.newContext({ offline: true });
    try {
      const external: string[] = [];
      await context.route('**/*', async (route) => {
        const url = route.request().url();
        if (url.startsWith('file://')) return route.continue();
        external.push(url);
        return route.abort();
      });
      const page = await context.newPage();
      await page.goto(`file://${path.join(ROOT, 'dist/pages/verify.html')}`);
      const steps = await verify(page, receipt, undefined, '');
      expect(steps).toMatchObject({ TX_ID: 'passed', MERKLE_PROOF: 'passed', BEEF: 'passed', CONTENT: 'skipped' });
      expect(external).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('GET / links the verifier; GET /verify is one self-contained HTML page', async () => {
    const root = await fetch(`${f.base}/`);
    expect(root.status).toBe(200);
    expect(((await root.json()) as { links: Record<string, string> }).links).toMatchObject({ verify: '/verify' });
    const res = await fetch(`${f.base}/verify`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).not.toMatch(/<script[^>]+src=/i);
    expect(html).not.toMatch(/<link[^>]+href=/i);
    expect(html).toContain('Content-Security-Policy');
  });
});
