import type { FeatureName } from '@proofline/shared-config';
import { AppError, badRequest, forbidden, notFound } from '@proofline/shared-errors';
import { parseEncodeParam } from '@proofline/records-domain';
import type { EncodeStep, RecordFamily, RecordMeta } from '@proofline/records-domain';
import type { RecordsConfig } from './types';

/** 403 FEATURE_NOT_ENABLED unless `feature` is on. */
export function requireFeature(config: RecordsConfig, feature: FeatureName): void {
  if (!config.features[feature]) {
    throw forbidden(
      'FEATURE_NOT_ENABLED',
      `The ${feature} feature is not enabled on this deployment; it requires an upgrade of your plan (FEATURES).`,
    );
  }
}

/** The write path's encoder chain (unencoded only with the `unencoded` feature). */
export function encodeSteps(config: RecordsConfig, raw: string | undefined): EncodeStep[] {
  return parseEncodeParam(raw, { available: config.encoders, unencodedAllowed: config.features.unencoded });
}

/** 400 CONTENT_IS_REQUIRED for an empty body, 413 CONTENT_LENGTH_LIMIT_EXCEEDED above the limit. */
export function requireBody(config: RecordsConfig, body: Uint8Array | undefined): Uint8Array {
  if (!body || body.byteLength === 0)
    throw badRequest('CONTENT_IS_REQUIRED', 'The request body (the record, as application/octet-stream) is required.');
  if (body.byteLength > config.maxRecordBytes) {
    throw new AppError({
      errorCode: 'CONTENT_LENGTH_LIMIT_EXCEEDED',
      httpStatus: 413,
      detail: `A record may be at most ${config.maxRecordBytes} bytes.`,
    });
  }
  return body;
}

/** 404 TX_NOT_FOUND when unknown, 400 TX_INCORRECT_EVENT_TRANSACTION_TYPE for the other family. */
export function requireFamily(meta: RecordMeta | null, family: RecordFamily, txId: string): RecordMeta {
  if (!meta) throw txNotFound(txId);
  if (meta.family !== family) throw wrongFamily(family);
  return meta;
}

export function txNotFound(txId: string): AppError {
  return notFound('TX_NOT_FOUND', `No record with txId ${txId}.`);
}

export function wrongFamily(expected: RecordFamily): AppError {
  return badRequest(
    'TX_INCORRECT_EVENT_TRANSACTION_TYPE',
    expected === 'linked'
      ? 'This txId is an independent record; use the /api/v1/records endpoints.'
      : 'This txId is a linked record; use the /api/v1/linkedrecords endpoints.',
  );
}
