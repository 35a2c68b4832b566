import { isForbiddenAddress } from './address-policy';
import { DEFAULT_DELIVERY_RETRY, deliveryJobId, retrySpanMs } from './delivery-job';
import { newWebhookSecret, secretBytes, signWebhook, verifyWebhookSignature } from './signature';
import { CreateWebhookRequest } from './webhook';

describe('Standard Webhooks signatures', () => {
  it("matches the specification's published example", () => {
    // From the Standard Webhooks reference libraries' tests.
    expect(
      signWebhook(
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        'msg_p5jXN8AQM9LWM0D4loKWxJek',
        1614265330,
        '{"test": 2432232314}',
      ),
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('secrets are whsec_ + base64 of 32 random bytes; a changed byte or id fails verification', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secretBytes(secret)).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(secret);
    const sig = signWebhook(secret, 'msg_1', 1700000000, '{"a":1}');
    expect(verifyWebhookSignature(secret, 'msg_1', 1700000000, '{"a":1}', `v1,bogus ${sig}`)).toBe(true);
    expect(verifyWebhookSignature(secret, 'msg_1', 1700000000, '{"a":2}', sig)).toBe(false);
    expect(verifyWebhookSignature(secret, 'msg_2', 1700000000, '{"a":1}', sig)).toBe(false);
    expect(verifyWebhookSignature(secret, 'msg_1', 1700000001, '{"a":1}', sig)).toBe(false);
  });
});

describe('webhook address policy', () => {
  it.each([
    '127.0.0.1',
    '127.9.9.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    'fd00::1',
    'fc00::1',
    'fe80::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:8.8.8.8',
    'localhost',
    '',
  ])('refuses %s', (address) => expect(isForbiddenAddress(address)).toBe(true));
  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '93.184.216.34', '2606:4700:4700::1111', '[2001:4860:4860::8888]'])(
    'allows %s',
    (address) => expect(isForbiddenAddress(address)).toBe(false),
  );
});

describe('webhook requests and delivery jobs', () => {
  it('validates the create body strictly', () => {
    expect(CreateWebhookRequest.safeParse({ url: 'https://x.example/h', events: ['record.confirmed'] }).success).toBe(
      true,
    );
    for (const bad of [
      {},
      { url: 'https://x', events: [] },
      { url: 'https://x', events: ['record.created'] },
      { url: 'https://x', events: ['record.failed', 'record.failed'] },
      { url: 'https://x', events: ['record.failed'], secret: 'mine' },
    ]) {
      expect(CreateWebhookRequest.safeParse(bad).success).toBe(false);
    }
  });

  it('delivery jobIds are deterministic and contain no colon; retries span at least 24 hours', () => {
    const id = deliveryJobId('0b1e7f2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b', 'ab'.repeat(32), 'record.confirmed');
    expect(id).toBe(deliveryJobId('0b1e7f2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b', 'ab'.repeat(32), 'record.confirmed'));
    expect(id).not.toContain(':');
    expect(retrySpanMs(DEFAULT_DELIVERY_RETRY)).toBeGreaterThanOrEqual(24 * 3600 * 1000);
  });
});
