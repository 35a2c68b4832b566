import calculateSlot from 'cluster-key-slot';

/** The Redis Cluster hash slot of `key` (0..16383): what `{…}` in a key name decides. */
export function slotOf(key: string): number {
  return calculateSlot(key);
}

/**
 * Groups positions `0..keys.length-1` by the hash slot of their key, in the order the slots
 * first appear, each group's positions ascending. A multi-key command (MGET, a `-n` script, a
 * pipeline on a cluster client) takes the keys of one group: Redis Cluster refuses keys of two
 * slots in one command (CROSSSLOT). Keys under one `keyTag` form one group, so a caller whose
 * keys share a tag today makes exactly one call, and keeps working unchanged once they spread
 * over tags (e.g. records partitions).
 */
export function groupBySlot(keys: readonly string[]): number[][] {
  const groups = new Map<number, number[]>();
  keys.forEach((key, i) => {
    const slot = calculateSlot(key);
    const group = groups.get(slot);
    if (group) group.push(i);
    else groups.set(slot, [i]);
  });
  return [...groups.values()];
}

/**
 * Answers one value per key, in order, from `read` called once per slot group (concurrently) with
 * that group's keys and positions: `read` returns the group's values in the order of its keys.
 */
export async function readBySlot<T>(
  keys: readonly string[],
  read: (keys: string[], positions: number[]) => Promise<readonly T[]>,
): Promise<T[]> {
  const out = new Array<T>(keys.length);
  await Promise.all(
    groupBySlot(keys).map(async (positions) => {
      const values = await read(
        positions.map((i) => keys[i] as string),
        positions,
      );
      if (values.length !== positions.length)
        throw new Error(`a slot group of ${positions.length} keys answered ${values.length} values`);
      positions.forEach((p, j) => (out[p] = values[j] as T));
    }),
  );
  return out;
}
