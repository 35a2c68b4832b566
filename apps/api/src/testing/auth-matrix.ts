// The shared auth matrix (not a spec itself): applied to every authenticated route, it asserts
// 401 for no key / malformed / unknown / revoked / expired keys and 403 PERMISSION_DENIED for
// valid keys lacking the permission, each as problem+json with its errorCode.
import { PERMISSIONS, generateRawKey } from '@proofline/identity-domain';
import type { Permission } from '@proofline/identity-domain';
import { call, seedKey } from './harness';
import type { CallResult, RunningApi } from './harness';

export interface AuthMatrixCase {
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
  readonly contentType?: string;
  /**
   * Permission sets that admit the caller: a key is allowed when it holds every permission of at
   * least one set. `'any-key'` means every valid key is allowed (only the 401 rows apply).
   */
  readonly allowed: readonly (readonly Permission[])[] | 'any-key';
  /** Headers every response must carry (e.g. the legacy Deprecation headers). */
  readonly expectHeaders?: Readonly<Record<string, string>>;
  /** Tenant of the seeded keys (default: a tenant of their own). */
  readonly tenant?: string;
}

function expectProblem(
  res: CallResult,
  status: number,
  errorCode: string,
  what: string,
  expectHeaders?: Readonly<Record<string, string>>,
): void {
  const body = res.body as { status?: unknown; errorCode?: unknown } | string;
  const got = { what, status: res.status, errorCode: typeof body === 'object' ? body.errorCode : body };
  expect(got).toEqual({ what, status, errorCode });
  expect(res.headers.get('content-type')).toContain('application/problem+json');
  expect(typeof body === 'object' && body.status).toBe(status);
  for (const [name, value] of Object.entries(expectHeaders ?? {}))
    expect({ what, [name]: res.headers.get(name) }).toEqual({ what, [name]: value });
}

/** Single permissions that satisfy none of the allowed sets. */
export function deniedPermissions(allowed: AuthMatrixCase['allowed']): Permission[] {
  if (allowed === 'any-key') return [];
  return PERMISSIONS.filter((p) => !allowed.some((set) => set.every((q) => q === p)));
}

/** Runs the whole matrix against one route. */
export async function assertAuthMatrix(api: RunningApi, c: AuthMatrixCase): Promise<void> {
  const tenant = c.tenant ?? 'auth-matrix';
  const send = (key: string | undefined) =>
    call(api, c.method, c.path, {
      ...(key !== undefined ? { key } : {}),
      ...(c.body !== undefined ? { body: c.body } : {}),
      ...(c.contentType ? { contentType: c.contentType } : {}),
    });
  const allowedPerms: readonly Permission[] =
    c.allowed === 'any-key' ? ['Issuer_Admin', 'Verifier_Admin'] : (c.allowed[0] ?? []);
  const { keyLifetimeDays } = api.deps.config;
  const longAgo = new Date(api.deps.clock.now().getTime() - (keyLifetimeDays + 1) * 86_400_000);

  expectProblem(await send(undefined), 401, 'API_KEY_MISSING', 'no key', c.expectHeaders);
  expectProblem(await send(''), 401, 'API_KEY_MISSING', 'empty key', c.expectHeaders);
  expectProblem(await send('not a key!'), 401, 'API_KEY_INVALID', 'malformed key', c.expectHeaders);
  expectProblem(await send(generateRawKey()), 401, 'API_KEY_INVALID', 'unknown key', c.expectHeaders);
  const revoked = await seedKey(api, { tenant, permissions: allowedPerms, revoked: true });
  expectProblem(await send(revoked.rawKey), 401, 'API_KEY_REVOKED', 'revoked key', c.expectHeaders);
  const expired = await seedKey(api, { tenant, permissions: allowedPerms, createdAt: longAgo });
  expectProblem(await send(expired.rawKey), 401, 'API_KEY_EXPIRED', 'expired key', c.expectHeaders);
  for (const p of deniedPermissions(c.allowed)) {
    const k = await seedKey(api, { tenant, permissions: [p] });
    expectProblem(await send(k.rawKey), 403, 'PERMISSION_DENIED', `key with only ${p}`, c.expectHeaders);
  }
}
