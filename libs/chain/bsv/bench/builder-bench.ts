/**
 * Throughput of the record transaction builder (build + sign + serialize), single thread.
 * Run: npx tsx libs/chain/bsv/bench/builder-bench.ts
 */
import { BsvTransactionBuilder } from '../src/index';

const builder = new BsvTransactionBuilder();
const small = new Uint8Array(Buffer.from('{"hello":"world","n":12345}', 'utf8'));
const big = new Uint8Array(1024 * 1024).fill(1);
/** One large pool UTXO (a fake parent: the builder signs for the funding key whatever the parent). */
const funding = [{ txId: 'fa'.repeat(32), vout: 0, satoshis: 10_000_000 }];

function run(label: string, n: number, make: () => void): void {
  for (let i = 0; i < Math.min(50, n); i++) make();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) make();
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  process.stdout.write(`${label.padEnd(36)} ${n} txs in ${ms.toFixed(0)} ms = ${((n / ms) * 1000).toFixed(0)} tx/s\n`);
}

run('independent (small)', 2000, () =>
  builder.build({ kind: 'independent', data: small, contentType: 'application/json', funding }),
);
const first = builder.build({ kind: 'create', data: small, contentType: 'application/json', funding });
let link = first.linkOutput!;
run('update (small, 2 signed inputs)', 2000, () => {
  link = builder.build({
    kind: 'update',
    data: small,
    contentType: 'application/json',
    spends: link,
    funding,
  }).linkOutput!;
});
run('independent (1 MiB)', 30, () =>
  builder.build({ kind: 'independent', data: big, contentType: 'application/octet-stream', funding }),
);
