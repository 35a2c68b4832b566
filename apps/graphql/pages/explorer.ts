/// <reference lib="dom" />
/**
 * The `/explorer` page (built by tools/build/pages.mjs into one HTML file, served by the GraphQL
 * app). It reads only through this app's GraphQL API with the user's key: the record, its chain,
 * the blocks, live confirmations over the `confirmation` subscription (SSE), and the blocks holding
 * the key's tenant's records (`myBlocks`). The key lives in sessionStorage and travels only in the
 * x-api-key header: never in a URL or a cookie. A record is addressed as `#tx=<txId>` (the fragment
 * never leaves the browser), so "Your blocks" links to each record's chain view.
 */
import type { Receipt } from '@proofline/records-domain';
import { byId, el } from '@proofline/shared-pages';

const KEY_SLOT = 'proofline.explorer.apiKey';
/** Confirmations the live view follows a version to (the subscription ends there). */
const FOLLOW_DEPTH = 6;
const TX_ID = /^[0-9a-f]{64}$/;
/** Blocks per "Your blocks" page, and records per page of one block. */
const MY_BLOCKS_PAGE = 20;
const MY_RECORDS_PAGE = 50;

interface Confirmation {
  blockHash: string;
  blockTimestamp: string;
  confirmedBlocks: number;
}
interface Version {
  __typename: 'LinkedRecord' | 'IndependentRecord';
  txId: string;
  acceptedAt: string;
  byteLength: number;
  contentType: string;
  encoding: string[];
  publication: 'PENDING' | 'PUBLISHED' | 'FAILED';
  confirmation: Confirmation | null;
  content: { text: string | null; byteLength: number };
  receipt: Receipt | null;
  kind?: 'CREATE' | 'UPDATE' | 'DELETE';
  position?: number;
  chainId?: string;
}
interface UserError {
  __typename: string;
  code: string;
  message: string;
}
interface ChainPage {
  totalCount: number;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  edges: { node: Version }[];
}
type LinkedResult = (Version & { chain: ChainPage | null }) | UserError;
interface PageInfo {
  hasNextPage: boolean;
  endCursor: string | null;
}
/** A block of `myBlocks` as the page reads it. */
export interface MyBlock {
  hash: string;
  height: number;
  time: string;
  recordCount: number;
  confirmations: number;
}
interface MyRecord {
  __typename: 'LinkedRecord' | 'IndependentRecord';
  txId: string;
  kind: 'CREATE' | 'UPDATE' | 'DELETE' | 'INDEPENDENT';
  acceptedAt: string;
  position?: number;
  chainId?: string;
}

const VERSION_FIELDS = `
  __typename txId acceptedAt byteLength contentType encoding publication
  confirmation { blockHash blockTimestamp confirmedBlocks }
  content { text byteLength }
  receipt {
    version txId family prevTxId rawTx encoding contentType
    merkleProof { index txOrId target nodes targetType proofType composite }
    blockHeader blockHash blockHeight beef
  }`;
const LINKED_FIELDS = `${VERSION_FIELDS} kind position chainId`;

const EXPLORE = `query Explore($txId: String!) {
  linkedRecord(txId: $txId) {
    __typename
    ... on LinkedRecord { ${LINKED_FIELDS} chain { totalCount pageInfo { hasNextPage endCursor } edges { node { ${LINKED_FIELDS} } } } }
    ... on UserError { code message }
  }
  record(txId: $txId) {
    __typename
    ... on IndependentRecord { ${VERSION_FIELDS} }
    ... on UserError { code message }
  }
}`;
const CHAIN_PAGE = `query ChainPage($txId: String!, $after: String!) {
  linkedRecord(txId: $txId) {
    __typename
    ... on LinkedRecord { chain(after: $after) { totalCount pageInfo { hasNextPage endCursor } edges { node { ${LINKED_FIELDS} } } } }
    ... on UserError { code message }
  }
}`;
const ONE_LINKED = `query One($txId: String!) { linkedRecord(txId: $txId) { __typename ... on LinkedRecord { ${LINKED_FIELDS} } ... on UserError { code message } } }`;
const ONE_INDEPENDENT = `query One($txId: String!) { record(txId: $txId) { __typename ... on IndependentRecord { ${VERSION_FIELDS} } ... on UserError { code message } } }`;
const BLOCK = `query Block($hash: String!) { block(hash: $hash) { __typename ... on Block { hash height time txCount } ... on UserError { code message } } }`;
const MY_BLOCKS = `query MyBlocks($after: String) {
  myBlocks(first: ${MY_BLOCKS_PAGE}, after: $after) { totalCount pageInfo { hasNextPage endCursor } edges { node { hash height time recordCount confirmations } } }
}`;
const MY_RECORDS = `query MyRecords($hash: String!, $after: String) {
  myBlock(hash: $hash) {
    __typename
    ... on MyBlock { records(first: ${MY_RECORDS_PAGE}, after: $after) { totalCount pageInfo { hasNextPage endCursor } edges { node { __typename txId kind acceptedAt ... on LinkedRecord { chainId position } } } } }
    ... on UserError { code message }
  }
}`;
const FOLLOW = `subscription Follow($txId: String!, $depth: Int!) {
  confirmation(txId: $txId, depth: $depth) { txId publication confirmedBlocks reached confirmation { blockHash blockTimestamp confirmedBlocks } }
}`;

const $ = byId;
const keyInput = $<HTMLInputElement>('key');
const txInput = $<HTMLInputElement>('txid');
const status = $<HTMLParagraphElement>('status');
const live = $<HTMLParagraphElement>('live');

/** The versions shown, by txId; the live streams of the current view. */
const shown = new Map<string, Version>();
let streams = new AbortController();

function apiKey(): string {
  return sessionStorage.getItem(KEY_SLOT) ?? '';
}

function showKeyState(): void {
  $('key-state').textContent = apiKey() ? 'A key is set for this tab.' : 'No key set.';
}

function say(text: string, error = false): void {
  status.textContent = text;
  status.classList.toggle('error', error);
}

function graphqlUrl(): string {
  return new URL('graphql', location.href.replace(/[^/]*([?#].*)?$/, '')).toString();
}

async function gql<T>(query: string, variables: Record<string, unknown>): Promise<T> {
  const res = await fetch(graphqlUrl(), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', 'x-api-key': apiKey() },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json().catch(() => ({}))) as {
    data?: T;
    errors?: { message: string; extensions?: { code?: string } }[];
    detail?: string;
  };
  const first = body.errors?.[0];
  // An error with nothing answered (no data, or every field null: a refused key) is the answer.
  const nothing = !body.data || Object.values(body.data as object).every((v) => v === null);
  if (first && nothing) throw new Error(`${first.extensions?.code ?? 'ERROR'}: ${first.message}`);
  if (!body.data) throw new Error(body.detail ?? `HTTP ${res.status}`);
  return body.data;
}

function isError(x: { __typename: string }): x is UserError {
  return 'code' in x && 'message' in x;
}

function shortHash(hex: string): string {
  return `${hex.slice(0, 10)}…${hex.slice(-6)}`;
}

function confirmationsText(v: Version): string {
  const n = v.confirmation?.confirmedBlocks ?? 0;
  if (v.publication === 'FAILED') return 'failed';
  if (n === 0) return v.publication === 'PENDING' ? 'pending' : 'not mined yet';
  return `${n} confirmation${n === 1 ? '' : 's'}`;
}

function receiptFile(r: Receipt): string {
  // The REST receipt's shape and field order: a linked record's prevTxId, an independent one's none.
  const { prevTxId, ...rest } = r;
  const ordered = {
    version: rest.version,
    txId: rest.txId,
    family: rest.family,
    ...(rest.family === 'linkedrecords' ? { prevTxId } : {}),
    rawTx: rest.rawTx,
    encoding: rest.encoding,
    contentType: rest.contentType,
    merkleProof: rest.merkleProof,
    blockHeader: rest.blockHeader,
    blockHash: rest.blockHash,
    blockHeight: rest.blockHeight,
    beef: rest.beef,
  };
  return `${JSON.stringify(ordered, null, 2)}\n`;
}

function download(v: Version): void {
  if (!v.receipt) return;
  const url = URL.createObjectURL(new Blob([receiptFile(v.receipt)], { type: 'application/json' }));
  const a = el('a', { href: url, download: `receipt-${v.txId}.json` });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function versionLabel(v: Version): string {
  return v.position === undefined
    ? 'Independent record'
    : `Version ${v.position + 1} · ${(v.kind ?? '').toLowerCase()}`;
}

function versionItem(v: Version, current: string): HTMLLIElement {
  const confirmed = (v.confirmation?.confirmedBlocks ?? 0) > 0;
  const badgeClass = v.publication === 'FAILED' ? 'bad' : confirmed ? 'ok' : 'wait';
  const facts = el(
    'dl',
    {},
    el('dt', {}, 'txId'),
    el('dd', { class: 'hex' }, v.txId),
    el('dt', {}, 'accepted'),
    el('dd', {}, v.acceptedAt),
    el('dt', {}, 'block'),
    el(
      'dd',
      { class: 'hex', 'data-field': 'block' },
      v.confirmation ? `${v.receipt ? `height ${v.receipt.blockHeight}, ` : ''}${v.confirmation.blockHash}` : '—',
    ),
    el('dt', {}, 'block time'),
    el('dd', { 'data-field': 'time' }, v.confirmation?.blockTimestamp ?? '—'),
    el('dt', {}, 'content type'),
    el('dd', {}, v.contentType),
  );
  const preview =
    v.kind === 'DELETE'
      ? el('p', { class: 'note' }, 'A delete carries no content.')
      : v.content.text !== null
        ? el('pre', { class: 'preview', 'aria-label': 'content preview' }, v.content.text.slice(0, 2000))
        : el('p', { class: 'note' }, `Binary content, ${v.content.byteLength} bytes.`);
  const button = el(
    'button',
    { type: 'button', 'aria-label': `Download the receipt of ${versionLabel(v).toLowerCase()}` },
    'Download receipt',
  );
  if (v.receipt) button.addEventListener('click', () => download(v));
  else {
    button.disabled = true;
    button.title = 'Available once the transaction is mined with its proof';
  }
  return el(
    'li',
    {
      'data-txid': v.txId,
      'data-confirmed': String(confirmed),
      'data-publication': v.publication,
      class: v.txId === current ? 'current' : '',
      ...(v.txId === current ? { 'aria-current': 'true' } : {}),
    },
    el(
      'h3',
      {},
      versionLabel(v),
      ' ',
      el('span', { class: 'badge', 'data-field': 'publication' }, v.publication.toLowerCase()),
      ' ',
      el('span', { class: `badge ${badgeClass}`, 'data-field': 'confirmations' }, confirmationsText(v)),
    ),
    facts,
    preview,
    button,
  );
}

function renderTimeline(current: string): void {
  const versions = [...shown.values()].sort((a, b) => (a.position ?? 0) - (b.position ?? 0));
  $('timeline').replaceChildren(...versions.map((v) => versionItem(v, current)));
  $('timeline').setAttribute(
    'aria-label',
    `${versions.length} version${versions.length === 1 ? '' : 's'}, oldest first`,
  );
  $('chain').hidden = false;
}

async function renderBlocks(): Promise<void> {
  const byBlock = new Map<string, Version[]>();
  for (const v of shown.values()) {
    if (!v.confirmation) continue;
    byBlock.set(v.confirmation.blockHash, [...(byBlock.get(v.confirmation.blockHash) ?? []), v]);
  }
  const rows: HTMLTableRowElement[] = [];
  for (const [hash, versions] of byBlock) {
    const data = await gql<{
      block: { __typename: string; hash?: string; height?: number; time?: string; txCount?: number };
    }>(BLOCK, { hash });
    const b = data.block;
    rows.push(
      el(
        'tr',
        {},
        el('td', {}, b.height === undefined ? '?' : String(b.height)),
        el('td', { class: 'hex', title: hash }, shortHash(hash)),
        el('td', {}, b.time ?? '—'),
        el('td', {}, versions.map((v) => versionLabel(v)).join(', ')),
        el('td', {}, b.txCount === undefined ? '—' : String(b.txCount)),
      ),
    );
  }
  rows.sort((a, b) => Number(a.cells[0]?.textContent) - Number(b.cells[0]?.textContent));
  const head = el(
    'tr',
    {},
    ...['Height', 'Block hash', 'Time', 'Your records in it', 'Proved transactions'].map((h) =>
      el('th', { scope: 'col' }, h),
    ),
  );
  $('blocks-table').replaceChildren(
    el('caption', { class: 'sr-only' }, 'Blocks holding the records shown'),
    el('thead', {}, head),
    el('tbody', {}, ...rows),
  );
  $('blocks').hidden = rows.length === 0;
}

function renderRecord(v: Version): void {
  const facts: [string, string][] = [
    ['txId', v.txId],
    ['kind', v.position === undefined ? 'independent record' : `linked record, ${(v.kind ?? '').toLowerCase()}`],
    ...(v.chainId ? ([['chain', v.chainId]] as [string, string][]) : []),
    ['encoding', v.encoding.join(' | ') || 'none'],
    ['size', `${v.byteLength} bytes`],
  ];
  $('record-facts').replaceChildren(...facts.flatMap(([k, val]) => [el('dt', {}, k), el('dd', { class: 'hex' }, val)]));
  $('record').hidden = false;
}

/** Reads one SSE stream of the subscription until it ends or the view changes. */
async function follow(txId: string, signal: AbortSignal): Promise<void> {
  const res = await fetch(graphqlUrl(), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-api-key': apiKey() },
    body: JSON.stringify({ query: FOLLOW, variables: { txId, depth: FOLLOW_DEPTH } }),
    signal,
  });
  if (!res.ok || !res.body) return;
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .join('\n');
      if (!data) continue;
      const update = (
        JSON.parse(data) as {
          data?: {
            confirmation?: {
              txId: string;
              publication: Version['publication'];
              confirmedBlocks: number;
              confirmation: Confirmation | null;
            };
          };
        }
      ).data?.confirmation;
      if (update) await applyUpdate(update);
    }
  }
}

async function applyUpdate(u: {
  txId: string;
  publication: Version['publication'];
  confirmedBlocks: number;
  confirmation: Confirmation | null;
}): Promise<void> {
  const before = shown.get(u.txId);
  if (!before) return;
  const newlyMined = !before.confirmation && u.confirmation !== null;
  let next: Version = { ...before, publication: u.publication, confirmation: u.confirmation };
  if (newlyMined) {
    // The receipt exists from now on: read the version again.
    const fresh = await readOne(before);
    if (fresh) next = fresh;
  }
  if (
    before.publication === next.publication &&
    before.confirmation?.confirmedBlocks === next.confirmation?.confirmedBlocks &&
    before.confirmation?.blockHash === next.confirmation?.blockHash &&
    !newlyMined
  )
    return;
  shown.set(u.txId, next);
  const current = document.querySelector('#timeline li.current')?.getAttribute('data-txid') ?? u.txId;
  const old = document.querySelector(`#timeline li[data-txid="${u.txId}"]`);
  old?.replaceWith(versionItem(next, current));
  live.textContent = `${versionLabel(next)}: ${confirmationsText(next)}${next.confirmation ? ` in block ${shortHash(next.confirmation.blockHash)}` : ''}.`;
  if (newlyMined || before.confirmation?.blockHash !== next.confirmation?.blockHash) {
    await renderBlocks();
    await loadMine();
  }
}

async function readOne(v: Version): Promise<Version | undefined> {
  const data =
    v.__typename === 'LinkedRecord'
      ? (await gql<{ linkedRecord: Version | UserError }>(ONE_LINKED, { txId: v.txId })).linkedRecord
      : (await gql<{ record: Version | UserError }>(ONE_INDEPENDENT, { txId: v.txId })).record;
  return isError(data) ? undefined : data;
}

async function explore(txId: string): Promise<void> {
  streams.abort();
  streams = new AbortController();
  shown.clear();
  for (const id of ['record', 'chain', 'blocks']) $(id).hidden = true;
  say('Loading…');
  const data = await gql<{ linkedRecord: LinkedResult | null; record: Version | UserError | null }>(EXPLORE, { txId });
  let versions: Version[];
  let focus: Version;
  if (data.linkedRecord && !isError(data.linkedRecord)) {
    const linked = data.linkedRecord;
    focus = linked;
    versions = linked.chain ? linked.chain.edges.map((e) => e.node) : [linked];
    let page = linked.chain?.pageInfo;
    while (page?.hasNextPage && page.endCursor) {
      const next = await gql<{ linkedRecord: { chain: ChainPage | null } | UserError }>(CHAIN_PAGE, {
        txId,
        after: page.endCursor,
      });
      if (isError(next.linkedRecord as UserError) || !(next.linkedRecord as { chain: ChainPage | null }).chain) break;
      const chain = (next.linkedRecord as { chain: ChainPage }).chain;
      versions.push(...chain.edges.map((e) => e.node));
      page = chain.pageInfo;
    }
  } else if (data.record && !isError(data.record)) {
    focus = data.record;
    versions = [data.record];
  } else {
    const error = [data.linkedRecord, data.record].find((r): r is UserError => r !== null && isError(r));
    say(error ? `${error.code}: ${error.message}` : 'No record with this txId.', true);
    return;
  }
  for (const v of versions) shown.set(v.txId, v);
  renderRecord(focus);
  renderTimeline(txId);
  await renderBlocks();
  say(`${versions.length} version${versions.length === 1 ? '' : 's'} shown; confirmations update live.`);
  $('record-title').focus();
  for (const v of versions) {
    if (v.publication === 'FAILED' || (v.confirmation?.confirmedBlocks ?? 0) >= FOLLOW_DEPTH) continue;
    follow(v.txId, streams.signal).catch(() => undefined);
  }
}

// "Your blocks": the blocks holding the key's tenant's records, newest first; each opens to the
// tenant's records in it (a disclosure: the button says whether its list is shown), each record a
// link to its chain view.

/** Where "Show older blocks" continues; the blocks whose record lists are open (kept across reloads). */
let mineCursor: string | null = null;
const mineOpen = new Set<string>();
let mineLoads = 0;

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

function recordLabel(r: MyRecord): string {
  return r.__typename === 'LinkedRecord'
    ? `Version ${(r.position ?? 0) + 1} · ${r.kind.toLowerCase()}`
    : 'Independent record';
}

function recordItem(r: MyRecord): HTMLLIElement {
  const link = el(
    'a',
    { href: `#tx=${r.txId}`, 'data-txid': r.txId },
    recordLabel(r),
    ' ',
    el('span', { class: 'hex' }, r.txId),
  );
  // The same fragment again fires no hashchange: open it anyway.
  link.addEventListener('click', (e) => {
    if (location.hash === `#tx=${r.txId}`) {
      e.preventDefault();
      openTx(r.txId);
    }
  });
  return el(
    'li',
    {},
    link,
    r.chainId && r.chainId !== r.txId
      ? el('span', { class: 'note' }, ` in chain ${shortHash(r.chainId)}`)
      : el('span', { class: 'note' }, ''),
  );
}

async function loadRecords(hash: string, panel: HTMLElement, after: string | null): Promise<void> {
  const list = panel.querySelector('ul') as HTMLUListElement;
  const more = panel.querySelector('button') as HTMLButtonElement;
  const data = await gql<{
    myBlock:
      | { __typename: 'MyBlock'; records: { totalCount: number; pageInfo: PageInfo; edges: { node: MyRecord }[] } }
      | UserError;
  }>(MY_RECORDS, { hash, after });
  const block = data.myBlock;
  if (isError(block)) {
    list.replaceChildren(el('li', { class: 'note' }, `${block.code}: ${block.message}`));
    more.hidden = true;
    return;
  }
  const items = block.records.edges.map((e) => recordItem(e.node));
  if (after) list.append(...items);
  else list.replaceChildren(...items);
  more.hidden = !block.records.pageInfo.hasNextPage;
  more.dataset['after'] = block.records.pageInfo.endCursor ?? '';
  live.textContent = `${plural(block.records.totalCount, 'of your records', 'of your records')} in the block at height ${
    panel.dataset['height'] ?? '?'
  }${after ? ', more shown' : ''}.`;
}

async function toggleBlock(b: MyBlock, toggle: HTMLButtonElement, panel: HTMLElement, open: boolean): Promise<void> {
  toggle.setAttribute('aria-expanded', String(open));
  panel.hidden = !open;
  if (!open) {
    mineOpen.delete(b.hash);
    return;
  }
  mineOpen.add(b.hash);
  await loadRecords(b.hash, panel, null);
}

function myBlockItem(b: MyBlock): HTMLLIElement {
  const panelId = `mine-${b.hash}`;
  const toggle = el(
    'button',
    { type: 'button', class: 'block-toggle', 'aria-expanded': 'false', 'aria-controls': panelId },
    el('span', { class: 'mark', 'aria-hidden': 'true' }),
    el('span', { class: 'block-line' }, `Height ${b.height}`),
    ' ',
    el(
      'span',
      { class: 'block-line' },
      `${plural(b.recordCount, 'of your records', 'of your records')} · ${plural(b.confirmations, 'confirmation')}`,
    ),
    ' ',
    el('span', { class: 'block-line hex' }, b.hash),
    ' ',
    el('span', { class: 'block-line note' }, b.time),
  );
  const more = el('button', { type: 'button' }, 'Show more records');
  more.hidden = true;
  const panel = el(
    'div',
    { id: panelId, class: 'mine-records', 'data-height': String(b.height) },
    el('ul', { 'aria-label': `Your records in the block at height ${b.height}` }),
    more,
  );
  panel.hidden = true;
  toggle.addEventListener('click', () => {
    toggleBlock(b, toggle, panel, toggle.getAttribute('aria-expanded') !== 'true').catch((err: unknown) =>
      panel.replaceChildren(el('p', { class: 'note' }, err instanceof Error ? err.message : String(err))),
    );
  });
  more.addEventListener('click', () => {
    loadRecords(b.hash, panel, more.dataset['after'] || null).catch(() => undefined);
  });
  const item = el('li', { 'data-hash': b.hash, 'data-height': String(b.height) }, toggle, panel);
  if (mineOpen.has(b.hash)) void toggleBlock(b, toggle, panel, true).catch(() => undefined);
  return item;
}

/** Reads "Your blocks" from the newest (or, with `more`, the next older page). */
async function loadMine(more = false): Promise<void> {
  const section = $('mine');
  if (!apiKey()) {
    section.hidden = true;
    return;
  }
  const load = ++mineLoads;
  section.hidden = false;
  section.setAttribute('aria-busy', 'true');
  try {
    const data = await gql<{
      myBlocks: { totalCount: number; pageInfo: PageInfo; edges: { node: MyBlock }[] } | null;
    }>(MY_BLOCKS, { after: more ? mineCursor : null });
    if (load !== mineLoads || !data.myBlocks) return;
    const { totalCount, pageInfo, edges } = data.myBlocks;
    const items = edges.map((e) => myBlockItem(e.node));
    if (more) $('mine-list').append(...items);
    else $('mine-list').replaceChildren(...items);
    mineCursor = pageInfo.endCursor;
    $('mine-more').hidden = !pageInfo.hasNextPage;
    $('mine-summary').textContent =
      totalCount === 0
        ? 'None of your records is in a block yet.'
        : `${plural(totalCount, 'block holds', 'blocks hold')} your records, newest first. Open one to list your records in it.`;
  } catch (err) {
    if (load !== mineLoads) return;
    $('mine-list').replaceChildren();
    $('mine-more').hidden = true;
    $('mine-summary').textContent =
      `Your blocks could not be read: ${err instanceof Error ? err.message : String(err)}`;
  } finally {
    if (load === mineLoads) section.setAttribute('aria-busy', 'false');
  }
}

/** Shows the record `txId` (a link of "Your blocks", or `#tx=` in the address). */
function openTx(txId: string): void {
  txInput.value = txId;
  if (!apiKey()) {
    say('Set an API key first.', true);
    keyInput.focus();
    return;
  }
  explore(txId).catch((err: unknown) => say(err instanceof Error ? err.message : String(err), true));
}

function txOfLocation(): string | null {
  const match = /^#tx=([0-9a-fA-F]{64})$/.exec(location.hash);
  return match ? (match[1] as string).toLowerCase() : null;
}

$('key-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const value = keyInput.value.trim();
  if (value) sessionStorage.setItem(KEY_SLOT, value);
  keyInput.value = '';
  showKeyState();
  mineOpen.clear();
  void loadMine();
});
$('forget').addEventListener('click', () => {
  sessionStorage.removeItem(KEY_SLOT);
  streams.abort();
  showKeyState();
  mineOpen.clear();
  mineLoads++;
  $('mine-list').replaceChildren();
  $('mine').hidden = true;
});
$('mine-more').addEventListener('click', () => void loadMine(true));
$('tx-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const txId = txInput.value.trim().toLowerCase();
  if (!TX_ID.test(txId)) {
    say('A txId is 64 hex characters.', true);
    txInput.focus();
    return;
  }
  openTx(txId);
});
window.addEventListener('hashchange', () => {
  const txId = txOfLocation();
  if (txId) openTx(txId);
});
showKeyState();
void loadMine();
const linked = txOfLocation();
if (linked && apiKey()) openTx(linked);
