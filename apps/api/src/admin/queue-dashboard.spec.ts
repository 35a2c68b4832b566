import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { QUEUES } from '@proofline/shared-jobs';
import { deleteByPrefix } from '@proofline/shared-redis';
import { CHROMIUM_ARGS, CHROMIUM_PATH as CHROMIUM, uniquePrefix, withBrowser } from '@proofline/shared-testing';
import { seedKey, send, startApi } from '../testing/harness';
import type { RunningApi, SeededKey } from '../testing/harness';

const PATH = '/admin/queues';
// The browser check runs where a Chromium is installed and always in CI (.ci/run installs it;
// `withBrowser` fails there rather than skip); CHROMIUM_PATH points elsewhere. The HTTP checks run everywhere.
const basic = (password: string, user = 'admin') => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** The queue dashboard over the real app: auth matrix, every queue, assets served with no internet. */
describe('queue dashboard /admin/queues', () => {
  const prefix = uniquePrefix('qd');
  let api: RunningApi;
  let issuerAdmin: SeededKey;
  let verifierAdmin: SeededKey;
  let issuerUser: SeededKey;
  let revoked: SeededKey;
  beforeAll(async () => {
    api = await startApi({ prefix });
    issuerAdmin = await seedKey(api, { tenant: 'qd', permissions: ['Issuer_Admin'] });
    verifierAdmin = await seedKey(api, { tenant: 'qd', permissions: ['Verifier_Admin'] });
    issuerUser = await seedKey(api, { tenant: 'qd', permissions: ['Issuer_User', 'Verifier_User'] });
    revoked = await seedKey(api, { tenant: 'qd', permissions: ['Issuer_Admin'], revoked: true });
  });
  afterAll(async () => {
    await deleteByPrefix(api.deps.redis, prefix);
    await api.close();
  });

  const get = (path: string, headers: Record<string, string> = {}) => send(api, 'GET', path, { headers });

  it.each([
    ['no credentials', {}, 401, 'API_KEY_MISSING'],
    ['Basic with an unknown key', { authorization: basic('idty_' + 'Z'.repeat(32)) }, 401, 'API_KEY_INVALID'],
    ['Basic with a malformed key', { authorization: basic('not-a-key') }, 401, 'API_KEY_INVALID'],
    ['Basic without a password', { authorization: basic('') }, 401, 'API_KEY_MISSING'],
    ['a bearer token instead of a key', { authorization: 'Bearer abc' }, 401, 'API_KEY_MISSING'],
  ])('%s: 401 problem+json with WWW-Authenticate: Basic', async (_name, headers, status, errorCode) => {
    const res = await get(PATH, headers);
    expect(res.status).toBe(status);
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="Proofline queues", charset="UTF-8"');
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await res.json()).toMatchObject({ status, errorCode });
  });

  it('a revoked admin key: 401', async () => {
    const res = await get(PATH, { authorization: basic(revoked.rawKey) });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ errorCode: 'API_KEY_REVOKED' });
  });

  it('a valid key without an admin permission: 403 (no challenge)', async () => {
    for (const headers of [{ authorization: basic(issuerUser.rawKey) }, { 'x-api-key': issuerUser.rawKey }] as Record<
      string,
      string
    >[]) {
      const res = await get(PATH, headers);
      expect(res.status).toBe(403);
      expect(res.headers.get('www-authenticate')).toBeNull();
      expect(await res.json()).toMatchObject({ errorCode: 'PERMISSION_DENIED' });
    }
  });

  it('Issuer_Admin by Basic (any user name) and Verifier_Admin by x-api-key: 200, every queue listed', async () => {
    const page = await get(PATH, { authorization: basic(issuerAdmin.rawKey, '') });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('cache-control')).toBe('no-store');
    const listed = await get(`${PATH}/api/queues?activeQueue=&page=1&jobsPerPage=10`, {
      'x-api-key': verifierAdmin.rawKey,
    });
    expect(listed.status).toBe(200);
    const body = (await listed.json()) as { queues: { name: string; readOnlyMode: boolean }[] };
    expect(body.queues.map((q) => q.name).sort()).toEqual(Object.values(QUEUES).sort());
    expect(body.queues.every((q) => q.readOnlyMode)).toBe(true);
  });

  it('is read-only: a pause from the browser changes nothing', async () => {
    const res = await send(api, 'PUT', `${PATH}/api/queues/${QUEUES.recordsPublish}/pause`, {
      headers: { authorization: basic(issuerAdmin.rawKey) },
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    const q = api.deps.queues?.find((x) => x.name === QUEUES.recordsPublish);
    expect(await q?.isPaused()).toBe(false);
  });

  it('the page and every asset it references are served locally (no internet needed)', async () => {
    const auth = { authorization: basic(issuerAdmin.rawKey) };
    const html = await (await get(PATH, auth)).text();
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
    expect(refs.length).toBeGreaterThanOrEqual(4);
    // nothing absolute: no CDN, no web fonts
    expect(refs.filter((r) => /^(https?:)?\/\//.test(r))).toEqual([]);
    expect(html).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);
    const base = /<base href="([^"]+)"/.exec(html)?.[1];
    expect(base).toBe(`${PATH}/`);
    for (const ref of refs.filter((r) => r !== base)) {
      const res = await get(new URL(ref, `http://x${base}`).pathname, auth);
      expect(`${ref} ${res.status}`).toBe(`${ref} 200`);
      expect(Number(res.headers.get('content-length') ?? (await res.arrayBuffer()).byteLength)).toBeGreaterThan(0);
    }
  });

  withBrowser(
    'renders in headless Chromium with no network, after HTTP Basic with the key as password, and lists every queue',
    async () => {
      const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dashboard-chromium-'));
      const context = await chromium.launchPersistentContext(userDataDir, {
        executablePath: CHROMIUM,
        headless: true,
        httpCredentials: { username: 'admin', password: verifierAdmin.rawKey },
        args: [...CHROMIUM_ARGS],
      });
      const external: string[] = [];
      const failed: string[] = [];
      try {
        // Nothing leaves the machine: any request not to this server is refused and recorded.
        await context.route('**/*', async (route) => {
          const url = route.request().url();
          if (url.startsWith(api.baseUrl) || url.startsWith('blob:') || url.startsWith('data:')) await route.continue();
          else {
            external.push(url);
            await route.abort();
          }
        });
        const page = context.pages()[0] ?? (await context.newPage());
        page.on('response', (r) => {
          if (r.url().startsWith(api.baseUrl) && r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
        });
        await page.goto(`${api.baseUrl}${PATH}`, { waitUntil: 'load', timeout: 60_000 });
        for (const name of Object.values(QUEUES))
          await page.getByText(name, { exact: false }).first().waitFor({ timeout: 60_000 });
        await page.screenshot({ path: path.join(os.tmpdir(), 'proofline-queue-dashboard.png') });
        expect(external).toEqual([]);
        expect(failed).toEqual([]);
      } finally {
        await context.close();
        fs.rmSync(userDataDir, { recursive: true, force: true });
      }
    },
    120_000,
  );

  it('ADMIN_UI=false: 404 whatever the key', async () => {
    const p2 = uniquePrefix('qd0');
    const off = await startApi({ prefix: p2, env: { ADMIN_UI: 'false' } });
    try {
      const key = await seedKey(off, { tenant: 'qd', permissions: ['Issuer_Admin'] });
      const res = await send(off, 'GET', PATH, { headers: { authorization: basic(key.rawKey) } });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ errorCode: 'ROUTE_NOT_FOUND' });
    } finally {
      await deleteByPrefix(off.deps.redis, p2);
      await off.close();
    }
  });
});
