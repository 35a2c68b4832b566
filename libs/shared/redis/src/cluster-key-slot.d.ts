/** cluster-key-slot (the CRC16 slot function ioredis routes cluster commands with) ships no types. */
declare module 'cluster-key-slot' {
  /** The hash slot (0..16383) of a key, honouring a `{…}` hash tag. */
  function calculateSlot(key: string): number;
  export default calculateSlot;
}
