/**
 * Stops this process (SIGTERM to itself, so its own graceful stop runs) when the `npm start`
 * launcher that spawned it is gone. The launcher gives each app an IPC channel for this alone: the
 * kernel closes it when the launcher dies in any way, SIGKILL included, and Node reports that as
 * `disconnect`. Without it a SIGKILLed launcher would leave the devnet node (its own process
 * group, so a group signal misses it) holding DEVNET_PORT, and the next start would fail. No-op
 * for a process started otherwise (a container, a test).
 */
export function followLauncher(): void {
  if (!process.channel) return;
  // The channel must not keep an otherwise finished process alive.
  process.channel.unref();
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
}
