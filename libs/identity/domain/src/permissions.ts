/** The six key permissions, per side. Values are case-sensitive. */
export const ISSUER_PERMISSIONS = ['Issuer_Admin', 'Issuer_User', 'Issuer_Auditor'] as const;
export const VERIFIER_PERMISSIONS = ['Verifier_Admin', 'Verifier_User', 'Verifier_Auditor'] as const;
export const PERMISSIONS = [...ISSUER_PERMISSIONS, ...VERIFIER_PERMISSIONS] as const;

export type Permission = (typeof PERMISSIONS)[number];
export type Side = 'issuer' | 'verifier';

/** Permissions that may manage keys (spec §5.2). */
export const KEY_ADMIN_PERMISSIONS: readonly Permission[] = ['Issuer_Admin', 'Verifier_Admin'];

const RANK: Readonly<Record<string, number>> = { Admin: 3, User: 2, Auditor: 1 };

export function isPermission(value: unknown): value is Permission {
  return typeof value === 'string' && (PERMISSIONS as readonly string[]).includes(value);
}

/** Side and rank (Admin 3, User 2, Auditor 1) of one permission. */
export function parsePermission(p: Permission): { side: Side; rank: number } {
  const [side, level] = p.split('_') as [string, string];
  return { side: side === 'Issuer' ? 'issuer' : 'verifier', rank: RANK[level] ?? 0 };
}

/** Highest rank a permission set holds on one side; a side it lacks is rank 0. */
export function rankOn(permissions: readonly Permission[], side: Side): number {
  let best = 0;
  for (const p of permissions) {
    const parsed = parsePermission(p);
    if (parsed.side === side && parsed.rank > best) best = parsed.rank;
  }
  return best;
}

/**
 * True when `target` outranks `holder` on either side, i.e. a key holding `holder` may not
 * create (or revoke, or delete) a key holding `target`.
 */
export function outranks(target: readonly Permission[], holder: readonly Permission[]): boolean {
  return (['issuer', 'verifier'] as const).some((side) => rankOn(target, side) > rankOn(holder, side));
}

/** True when `held` contains at least one of `required` (an empty `required` means any valid key). */
export function hasAnyPermission(held: readonly Permission[], required: readonly Permission[]): boolean {
  return required.length === 0 || required.some((p) => held.includes(p));
}

/** Canonical order (issuer side first), no duplicates. */
export function sortPermissions(permissions: readonly Permission[]): Permission[] {
  return PERMISSIONS.filter((p) => permissions.includes(p));
}
