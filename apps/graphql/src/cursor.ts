/**
 * Opaque Relay cursors: base64url of `<kind>:<position>`. `chain` cursors are positions in a
 * linked chain (0 = the create), `tx` cursors indexes in a block (0 = the coinbase).
 */
export type CursorKind = 'chain' | 'tx';

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
