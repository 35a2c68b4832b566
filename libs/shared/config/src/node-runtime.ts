/**
 * Several API processes share `PORT` by each listening with `reusePort` (SO_REUSEPORT), which
 * Node has from 22.12 (and 23.1). An older Node silently ignores the option, so the second
 * process would fail with EADDRINUSE: it MUST be refused at start instead, naming the version.
 */
export function supportsReusePort(version: string = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number);
  if (major === 22) return minor >= 12;
  if (major === 23) return minor >= 1;
  return major > 22;
}

/** Why `API_PROCESSES` cannot run on this Node, or undefined when it can. */
export function reusePortProblem(apiProcesses: number, version: string = process.version): string | undefined {
  if (apiProcesses <= 1 || supportsReusePort(version)) return undefined;
  return `API_PROCESSES=${apiProcesses} needs Node >= 22.12 (listen with reusePort, SO_REUSEPORT); this is Node ${version}: use Node 24 LTS, or set API_PROCESSES=1`;
}
