import { AppError } from '@proofline/shared-errors';
import { storeCall } from './store-call';

const failWith = (err: unknown) => storeCall(() => Promise.reject(err));

describe('storeCall', () => {
  it('answers REDIS_UNAVAILABLE (503, Retry-After) for a socket error of the call itself', async () => {
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    await expect(failWith(reset)).rejects.toMatchObject({
      errorCode: 'REDIS_UNAVAILABLE',
      httpStatus: 503,
      headers: { 'Retry-After': '1' },
    });
  });

  it('answers REDIS_UNAVAILABLE for a client failure (command timeout, closed connection)', async () => {
    await expect(failWith(new Error('Command timed out'))).rejects.toMatchObject({ errorCode: 'REDIS_UNAVAILABLE' });
    await expect(failWith(new Error('Connection is closed.'))).rejects.toMatchObject({
      errorCode: 'REDIS_UNAVAILABLE',
    });
  });

  it('keeps STORE_UNAVAILABLE for other store faults and passes refusals through', async () => {
    await expect(failWith(new TypeError('unexpected reply'))).rejects.toMatchObject({
      errorCode: 'STORE_UNAVAILABLE',
      httpStatus: 503,
    });
    const refusal = new AppError({ errorCode: 'API_KEY_NOT_FOUND', httpStatus: 404, detail: 'no such key' });
    await expect(failWith(refusal)).rejects.toBe(refusal);
  });
});
