import { isLegacyId, isUuid, legacyKeyUuid, toLegacyApiKey } from '@proofline/identity-domain';
import type { IdentityApiKey, LegacyApiKey, Principal } from '@proofline/identity-domain';
import { identityErrors as E } from './errors';
import type { KeyCommands } from './key-commands';

export type CreatedLegacyKey = LegacyApiKey & { rawKey: string };

/**
 * The legacy key endpoints mapped onto the key commands: numeric legacy ids resolve to their
 * stable identity UUIDs, and keys are shaped as legacy list items.
 */
export class LegacyKeys {
  constructor(private readonly keys: KeyCommands) {}

  async list(caller: Principal): Promise<LegacyApiKey[]> {
    return (await this.keys.tenantRecords(caller)).map(toLegacyApiKey);
  }

  /** Issues an identity key (UUID id) with exactly the caller's own permissions. */
  async create(caller: Principal, name: string): Promise<CreatedLegacyKey> {
    const { rawKey, ...key } = await this.keys.createKey(caller, { name, permissions: caller.permissions });
    return { ...asLegacy(key), rawKey };
  }

  async delete(caller: Principal, apiKeyId: string): Promise<void> {
    await this.keys.remove(caller, this.target(apiKeyId));
  }

  async patch(caller: Principal, apiKeyId: string, status: 'Active' | 'Disabled'): Promise<LegacyApiKey> {
    return toLegacyApiKey(await this.keys.setRevoked(caller, this.target(apiKeyId), status === 'Disabled'));
  }

  /**
   * The identity id behind a legacy `apiKeyId`: numeric ids map to their stable UUID; a UUID
   * is refused (400, managed by the identity system); anything else is 400 API_KEY_ID_INVALID.
   */
  target(apiKeyId: string): string {
    if (isUuid(apiKeyId)) throw E.managedByIdentity(apiKeyId.toLowerCase());
    if (!isLegacyId(apiKeyId)) throw E.legacyIdInvalid(apiKeyId);
    return legacyKeyUuid(apiKeyId);
  }
}

/** A just-created identity key as a legacy list item (a UUID id: it is no imported legacy key). */
function asLegacy(key: IdentityApiKey): LegacyApiKey {
  return {
    id: key.id,
    name: key.name,
    status: key.revokedAt === null ? 'Active' : 'Disabled',
    createdAt: key.createdAt,
    expiresAt: key.expiresAt,
    keyMask: key.keyMask,
    permissions: [...key.permissions],
  };
}
