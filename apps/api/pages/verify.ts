/// <reference lib="dom" />
/**
 * The `/verify` page (built by tools/build/pages.mjs into one HTML file). The checks are the
 * service's own: records-feature's verifyReceipt with chain-bsv's SpvCodec, bundled for the
 * browser; this file only reads the inputs and shows the verdict. The Merkle picture recomputes
 * the fold to draw it; the pass/fail of that step is verifyReceipt's.
 */
import { WocHeadersClient } from '@proofline/chain-arc';
import { BsvSpvCodec } from '@proofline/chain-bsv';
import { DUPLICATE_NODE, fromDisplayHex, parseHeader, sha256d, toDisplayHex } from '@proofline/chain-domain';
import { Receipt } from '@proofline/records-domain';
import { RECEIPT_CHECKS, RECEIPT_CHECK_MEANING, RECEIPT_LIMITS, verifyReceipt } from '@proofline/records-feature';
import type { ReceiptCheck, ReceiptComparison, ReceiptVerdict } from '@proofline/records-feature';
import { byId, el } from '@proofline/shared-pages';

type Step = 'RECEIPT' | ReceiptCheck;
type Status = 'passed' | 'failed' | 'skipped' | 'not-run';

const TITLES: Record<Step, string> = {
  RECEIPT: 'Receipt format',
  TX_ID: 'Transaction id',
  BLOCK_HASH: 'Block hash',
  PROOF_OF_WORK: 'Proof of work',
  MERKLE_PROOF: 'Merkle path',
  BEEF: 'BEEF (SPV envelope)',
  CONTENT: 'Content and its encoding',
  HEADERS_SOURCE: 'Block on a headers service',
};
const MEANING: Record<Step, string> = {
  RECEIPT: 'the file is a Proofline receipt (JSON with every field in its format)',
  ...RECEIPT_CHECK_MEANING,
};

const $ = byId;
const form = $<HTMLFormElement>('form');
const drop = $<HTMLDivElement>('drop');
const receiptInput = $<HTMLInputElement>('receipt');
const contentInput = $<HTMLInputElement>('content');
const encodeInput = $<HTMLInputElement>('encode');
const onlineInput = $<HTMLInputElement>('online');
const headersUrlInput = $<HTMLInputElement>('headers-url');

let receiptFile: File | undefined;
let contentFile: File | undefined;

function showPicked(): void {
  $('receipt-name').textContent = receiptFile ? receiptFile.name : '';
  $('content-name').textContent = contentFile ? contentFile.name : '';
}

receiptInput.addEventListener('change', () => {
  receiptFile = receiptInput.files?.[0];
  showPicked();
});
contentInput.addEventListener('change', () => {
  contentFile = contentInput.files?.[0];
  showPicked();
});

async function looksLikeReceipt(file: File): Promise<boolean> {
  if (file.size > 10_000_000) return false;
  try {
    const json = JSON.parse(await file.text()) as Record<string, unknown>;
    return typeof json === 'object' && json !== null && 'txId' in json && 'merkleProof' in json;
  } catch {
    return false;
  }
}

drop.addEventListener('dragover', (e) => {
  e.preventDefault();
  drop.classList.add('over');
});
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', (e) => {
  e.preventDefault();
  drop.classList.remove('over');
  void (async () => {
    for (const file of Array.from(e.dataTransfer?.files ?? [])) {
      if (await looksLikeReceipt(file)) receiptFile = file;
      else contentFile = file;
    }
    showPicked();
    if (receiptFile) form.requestSubmit();
  })();
});
drop.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' || e.key === ' ') {
    e.preventDefault();
    receiptInput.click();
  }
});

function short(hex: string): string {
  return hex.length > 20 ? `${hex.slice(0, 8)}…${hex.slice(-8)}` : hex;
}

function comparisonTable(rows: readonly ReceiptComparison[]): HTMLTableElement {
  const table = el('table');
  for (const row of rows) {
    // Proof of work compares a hash with a target, not two equal values.
    const target = row.label === 'hash ≤ target';
    const same = target
      ? /^[0-9a-f]+$/.test(row.expected) &&
        /^[0-9a-f]+$/.test(row.computed) &&
        BigInt(`0x${row.computed}`) <= BigInt(`0x${row.expected}`)
      : row.expected === row.computed;
    const mark = target ? (same ? '✓ at or below the target' : '✗ above the target') : same ? '✓ equal' : '✗ differ';
    table.append(
      el(
        'tr',
        {},
        el('th', { scope: 'row' }, target ? 'target (from bits)' : `${row.label}, expected`),
        el('td', { class: 'hex' }, row.expected),
      ),
      el(
        'tr',
        {},
        el('th', { scope: 'row' }, target ? 'block hash' : `${row.label}, computed`),
        el('td', { class: 'hex' }, row.computed, ' ', el('span', { class: same ? 'match' : 'mismatch' }, mark)),
      ),
    );
  }
  return table;
}

function stepItem(step: Step, status: Status, rows: readonly ReceiptComparison[], detail?: string): HTMLLIElement {
  const words: Record<Status, string> = {
    passed: 'passed',
    failed: 'FAILED',
    skipped: 'not checked',
    'not-run': 'not run (an earlier check failed)',
  };
  const li = el(
    'li',
    { 'data-check': step, 'data-status': status },
    el(
      'div',
      {},
      el('span', { class: 'verdict' }, status === 'passed' ? '✓ ' : status === 'failed' ? '✗ ' : '– '),
      el('strong', {}, TITLES[step]),
      `: ${words[status]}`,
    ),
    el('div', { class: 'note' }, MEANING[step]),
  );
  if (detail) li.append(el('div', { class: 'detail' }, detail));
  if (rows.length > 0) li.append(comparisonTable(rows));
  return li;
}

/** The fold of the proof, level by level, for the picture (verifyReceipt decides the verdict). */
function drawMerkle(receipt: Receipt): HTMLElement {
  const box = el('div');
  let headerRoot: string;
  try {
    headerRoot = parseHeader(receipt.blockHeader).merkleRoot;
  } catch {
    box.append(el('p', { class: 'detail' }, 'The block header does not parse: no picture.'));
    return box;
  }
  const list = el('ol', { 'aria-label': 'Merkle path, from the transaction up to the root' });
  let running: Uint8Array;
  try {
    running = fromDisplayHex(receipt.txId);
  } catch {
    box.append(el('p', { class: 'detail' }, 'The txId is not a hash: no picture.'));
    return box;
  }
  let index = receipt.merkleProof.index;
  const node = (hex: string, caption: string, ours: boolean): HTMLElement =>
    el('div', { class: ours ? 'node ours hex' : 'node hex', title: hex }, el('small', {}, caption), short(hex));
  receipt.merkleProof.nodes.forEach((sibling, level) => {
    const right = (index & 1) === 1;
    const oursHex = toDisplayHex(running);
    const siblingHex = sibling === DUPLICATE_NODE ? oursHex : sibling;
    let siblingBytes: Uint8Array;
    try {
      siblingBytes = fromDisplayHex(siblingHex);
    } catch {
      list.append(
        el(
          'li',
          {},
          el('span', { class: 'level' }, `level ${level}`),
          el('span', { class: 'detail' }, `malformed node ${sibling}`),
        ),
      );
      return;
    }
    const ours = node(oursHex, level === 0 ? 'transaction' : 'running hash', true);
    const theirs = node(
      siblingHex,
      sibling === DUPLICATE_NODE ? 'sibling (duplicate)' : 'sibling from the proof',
      false,
    );
    list.append(
      el(
        'li',
        { 'aria-label': `level ${level}: ${right ? 'sibling left, ours right' : 'ours left, sibling right'}` },
        el('span', { class: 'level' }, `level ${level}`),
        right ? theirs : ours,
        right ? ours : theirs,
      ),
    );
    running = right ? sha256d(Buffer.concat([siblingBytes, running])) : sha256d(Buffer.concat([running, siblingBytes]));
    index = Math.floor(index / 2);
  });
  const root = toDisplayHex(running);
  const same = root === headerRoot;
  list.append(
    el(
      'li',
      { class: 'root' },
      el('span', { class: 'level' }, 'root'),
      el(
        'div',
        { class: 'node hex', title: root },
        el('small', {}, 'computed root · root in the block header'),
        `${short(root)} · ${short(headerRoot)} `,
        el('span', { class: same ? 'match' : 'mismatch' }, same ? '✓ equal' : '✗ differ'),
      ),
    ),
  );
  box.append(list);
  return box;
}

function show(summary: string, items: HTMLLIElement[], limits: string, picture?: HTMLElement): void {
  const result = $('result');
  result.hidden = false;
  $('summary').textContent = summary;
  $('limits').textContent = limits;
  $('steps').replaceChildren(...items);
  $('merkle').replaceChildren(...(picture ? [picture] : []));
  $('status').textContent = summary;
  $('summary').focus();
}

async function run(): Promise<void> {
  // A new verdict replaces the old one: nothing of the previous run stays on screen meanwhile.
  $('steps').replaceChildren();
  $('merkle').replaceChildren();
  $('result').hidden = true;
  $('status').textContent = 'Verifying…';
  if (!receiptFile) {
    show('Pick a receipt first.', [], '');
    return;
  }
  let parsed: Receipt;
  try {
    const result = Receipt.safeParse(JSON.parse(await receiptFile.text()));
    if (!result.success) {
      const issue = result.error.issues[0];
      throw new Error(issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'not a receipt');
    }
    parsed = result.data;
  } catch (e) {
    const items = [stepItem('RECEIPT', 'failed', [], `malformed receipt: ${(e as Error).message}`)];
    for (const check of RECEIPT_CHECKS) items.push(stepItem(check, 'not-run', []));
    show('✗ Not verified: the receipt is malformed', items, '');
    return;
  }
  const content = contentFile ? new Uint8Array(await contentFile.arrayBuffer()) : undefined;
  const encode = encodeInput.value.trim();
  const headersUrl = headersUrlInput.value.trim();
  const online = onlineInput.checked && headersUrl !== '';
  let verdict: ReceiptVerdict;
  try {
    verdict = await verifyReceipt(parsed, {
      spv: new BsvSpvCodec(),
      ...(content ? { content } : {}),
      ...(encode ? { encode } : {}),
      ...(online ? { headers: new WocHeadersClient({ url: headersUrl.replace(/\/+$/, ''), timeoutMs: 15_000 }) } : {}),
    });
  } catch (e) {
    const message = (e as { detail?: string; message?: string }).detail ?? (e as Error).message;
    // A bad encode string is the user's input, the headers service's silence is no verdict.
    show(`Could not verify: ${message}`, [], '');
    return;
  }
  const items = [stepItem('RECEIPT', 'passed', [])];
  for (const check of RECEIPT_CHECKS) {
    const rows = verdict.compared[check] ?? [];
    if (verdict.passed.includes(check)) items.push(stepItem(check, 'passed', rows));
    else if (!verdict.valid && verdict.failed === check) items.push(stepItem(check, 'failed', rows, verdict.detail));
    else if (!verdict.valid) items.push(stepItem(check, 'not-run', rows));
    else items.push(stepItem(check, 'skipped', [], undefined));
  }
  const skippedWhy = [
    content ? '' : 'Add the original file to check the content.',
    online ? '' : 'Name a headers service and tick the box to check the block online.',
  ]
    .filter(Boolean)
    .join(' ');
  const summary = verdict.valid
    ? `✓ Verified: ${parsed.family} ${parsed.txId} in block ${parsed.blockHash} (height ${parsed.blockHeight})`
    : `✗ Not verified: ${TITLES[verdict.failed]} failed`;
  show(summary, items, [online ? '' : RECEIPT_LIMITS, skippedWhy].filter(Boolean).join(' '), drawMerkle(parsed));
}

form.addEventListener('submit', (e) => {
  e.preventDefault();
  void run();
});
