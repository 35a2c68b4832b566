import fs from 'node:fs';
import { WocHeadersClient } from '@proofline/chain-arc';
import { BsvSpvCodec } from '@proofline/chain-bsv';
import { Receipt } from '@proofline/records-domain';
import { RECEIPT_CHECK_MEANING, RECEIPT_LIMITS, verifyReceipt } from '@proofline/records-feature';
import { AppError } from '@proofline/shared-errors';

export interface ReceiptVerifyArgs {
  readonly file: string | undefined;
  readonly content?: string | undefined;
  readonly encode?: string | undefined;
  readonly headersUrl?: string | undefined;
}

export interface CommandOutput {
  readonly code: number;
  readonly stdout: string[];
  readonly stderr: string[];
}

const SHORT: Record<string, string> = {
  TX_ID: 'txId',
  BLOCK_HASH: 'block hash',
  PROOF_OF_WORK: 'proof of work',
  MERKLE_PROOF: 'Merkle proof',
  BEEF: 'BEEF',
  CONTENT: 'content',
  HEADERS_SOURCE: 'headers service',
};

/**
 * `receipt verify FILE [--content PATH] [--encode ENCODE] [--headers-url URL]`: checks a receipt
 * with no service and no network (unless --headers-url). Exit 0 with a one-line summary, 1 naming
 * the first failed check, 2 on a malformed receipt or bad arguments. Needs no configuration.
 */
export async function receiptVerify(args: ReceiptVerifyArgs): Promise<CommandOutput> {
  const usage = (line: string): CommandOutput => ({ code: 2, stdout: [], stderr: [`proofline cli: ${line}`] });
  if (!args.file) return usage('usage: receipt verify FILE [--content PATH] [--encode ENCODE] [--headers-url URL]');
  let text: string;
  try {
    text = fs.readFileSync(args.file, 'utf8');
  } catch (e) {
    return usage(`cannot read ${args.file}: ${(e as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return usage(`malformed receipt: ${args.file} is not JSON`);
  }
  const parsed = Receipt.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return usage(
      `malformed receipt: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'not a receipt'}`,
    );
  }
  let content: Buffer | undefined;
  if (args.content !== undefined) {
    try {
      content = fs.readFileSync(args.content);
    } catch (e) {
      return usage(`cannot read --content ${args.content}: ${(e as Error).message}`);
    }
  }
  let headers: WocHeadersClient | undefined;
  if (args.headersUrl !== undefined) {
    if (!/^https?:\/\/[^\s]+$/.test(args.headersUrl))
      return usage(
        '--headers-url must be an http(s) URL (a WhatsOnChain-compatible base, e.g. https://api.whatsonchain.com/v1/bsv/main)',
      );
    headers = new WocHeadersClient({ url: args.headersUrl, timeoutMs: 15_000 });
  }
  const receipt = parsed.data;
  let verdict;
  try {
    verdict = await verifyReceipt(receipt, {
      spv: new BsvSpvCodec(),
      ...(content !== undefined ? { content } : {}),
      ...(args.encode !== undefined ? { encode: args.encode } : {}),
      ...(headers ? { headers } : {}),
    });
  } catch (e) {
    if (e instanceof AppError) return usage(`--encode: ${e.detail}`);
    // The headers service could not answer: not a verdict on the receipt.
    return {
      code: 1,
      stdout: [],
      stderr: [`FAILED HEADERS_SOURCE: ${RECEIPT_CHECK_MEANING.HEADERS_SOURCE}: ${(e as Error).message}`],
    };
  }
  if (!verdict.valid) {
    return {
      code: 1,
      stdout: [],
      stderr: [`FAILED ${verdict.failed}: ${RECEIPT_CHECK_MEANING[verdict.failed]}: ${verdict.detail}`],
    };
  }
  const checked = verdict.passed.map((c) => SHORT[c] ?? c).join(', ');
  const note = headers
    ? `note: block ${receipt.blockHash} was found on the chain of ${args.headersUrl ?? ''}; whether that chain is the longest one is as good as that service.`
    : `note: ${RECEIPT_LIMITS}`;
  return {
    code: 0,
    stdout: [
      `OK ${receipt.family} ${receipt.txId} in block ${receipt.blockHash} (height ${receipt.blockHeight}): ${checked} verified`,
    ],
    stderr: [note],
  };
}
