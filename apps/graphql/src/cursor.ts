/**
 * Opaque Relay cursors: base64url of `<kind>:<position>`. `chain` cursors are positions in a
 * linked chain (0 = the create), `tx` cursors indexes in a block (0 = the coinbase), `mine`
 * cursors positions in the caller's records of one block. The caller's blocks (`myBlocks`) are
 * keyset cursors instead ({@link toBlockCursor}): that list grows at its newest end.
 */
export type CursorKind = 'chain' | 'tx' | 'mine';

const MAX_POSITION = 999_999_999;

export function toCursor(kind: CursorKind, position: number): string {
  return Buffer.from(`${kind}:${position}`, 'utf8').toString('base64url');
}

/** The position in a cursor, or null when it is not a cursor of `kind`. */
export function positionOf(kind: CursorKind, cursor: string): number | null {
  if (cursor.length > 32 || !/^[A-Za-z0-9_-]+={0,2}$/.test(cursor)) return null;
  const match = /^([a-z]+):(0|[1-9][0-9]{0,8})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match || match[1] !== kind) return null;
  const n = Number(match[2]);
  return n <= MAX_POSITION ? n : null;
}

/** A block's place in the caller's block list: newest first, by height, then hash. */
export interface BlockKey {
  readonly height: number;
  readonly hash: string;
}

/** Cursor of a block in `myBlocks`: base64url of `block:<height>:<hash>`, so pages hold still as blocks arrive. */
export function toBlockCursor(key: BlockKey): string {
  return Buffer.from(`block:${key.height}:${key.hash}`, 'utf8').toString('base64url');
}

/** The block key in a `myBlocks` cursor, or null when it is not one. */
export function blockKeyOf(cursor: string): BlockKey | null {
  if (cursor.length > 128 || !/^[A-Za-z0-9_-]+={0,2}$/.test(cursor)) return null;
  const match = /^block:(0|[1-9][0-9]{0,9}):([0-9a-f]{64})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) return null;
  const height = Number(match[1]);
  return height <= 0xffffffff ? { height, hash: match[2] as string } : null;
}
