/** Every Redis key of the records lib, built from the deployment's prefix. Nowhere else spells them. */
export function recordsKeys(prefix: string) {
  const chainPrefix = `${prefix}:records:chain:`;
  const recordPrefix = `${prefix}:records:rec:`;
  return {
    /** HASH: one record (metadata, bytes, publication state); its raw transaction is `tx(…)`. */
    record: (txId: string) => `${recordPrefix}${txId}`,
    /**
     * STRING: the record's raw transaction, binary. Kept beside the hash, not in it: one value over
     * 64 bytes turns a small hash from a listpack into a hashtable (~1.9 KB instead of ~0.4 KB a
     * record). Records accepted before this key existed keep `rawTx` (hex) in their hash; readers
     * fall back to it.
     */
    tx: (txId: string) => `${prefix}:records:tx:${txId}`,
    /**
     * STRING: what Extended Format adds to `tx(…)` (per input, the satoshis and locking script it
     * spends; chain-domain `extensionOf`), binary: publication sends `withExtension(tx, ef)`.
     * Absent for records accepted before records were sent in EF: they are sent raw.
     */
    ef: (txId: string) => `${prefix}:records:ef:${txId}`,
    /** Prefix of `record(…)`, for the batched read scripts (meta-many, bytes-many). */
    recordPrefix,
    /** LIST: txIds of a linked chain in order (index = position); chainId = the create's txId. */
    chain: (chainId: string) => `${chainPrefix}${chainId}`,
    /** Prefix of `chain(…)`, for the navigate script, which learns the chainId from the start record. */
    chainPrefix,
    /** ZSET (transactional outbox): member txId, score acceptance time (ms); removed once published or rejected. */
    outbox: `${prefix}:records:outbox`,
    /**
     * STRING (JSON `{since, httpStatus, detail}`, with a TTL): publication is paused because the
     * chain answered a problem about the request itself, not about a transaction (publication-pause.ts).
     */
    publicationPaused: `${prefix}:records:publication-paused`,
  };
}

export type RecordsKeys = ReturnType<typeof recordsKeys>;
