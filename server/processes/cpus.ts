import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** A file's text, or undefined when it cannot be read. */
export type ReadFile = (path: string) => string | undefined;

const readOrNone: ReadFile = (path) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

/**
 * The CPUs this process may use: its affinity mask (`os.availableParallelism()`) and, below that, the CPU quota of its
 * cgroup, which a container's CPU limit sets. Node 20's libuv (1.46) reads only the mask, so a container given 2 of a
 * host's 32 CPUs would start 32 API processes; libuv 1.49 (Node 22) reads the quota too, the same way: quota over
 * period, floored, at least 1.
 */
export function usableCpus(read: ReadFile = readOrNone, affinity = availableParallelism()): number {
  const quota = cgroupCpuQuota(read);
  return quota === null ? affinity : Math.max(1, Math.min(affinity, quota));
}

/**
 * The CPU quota of this process's cgroup in whole CPUs, or null when it has none (or none can be read). cgroup v2:
 * `cpu.max` ("max 100000" is none); v1: `cpu.cfs_quota_us` over `cpu.cfs_period_us` (-1 is none). The group's own
 * folder is tried first, then the mount's root: inside a container the mount is often the group itself while
 * /proc/self/cgroup still names the host's path.
 */
export function cgroupCpuQuota(read: ReadFile): number | null {
  const quotas: number[] = [];
  for (const line of (read('/proc/self/cgroup') ?? '').split('\n')) {
    const match = /^\d+:([^:]*):(\/.*)$/.exec(line.trim());
    if (!match) continue;
    const [, controllers, path] = match as unknown as [string, string, string];
    const folders = (mount: string) => [...new Set([`${mount}${path === '/' ? '' : path}`, mount])];
    if (controllers === '') {
      for (const folder of folders('/sys/fs/cgroup')) {
        const max = read(`${folder}/cpu.max`)?.trim().split(/\s+/);
        if (!max) continue;
        if (max[0] !== 'max') quotas.push(Number(max[0]) / Number(max[1] ?? 100_000));
        break;
      }
    } else if (controllers.split(',').includes('cpu')) {
      for (const folder of [...folders(`/sys/fs/cgroup/${controllers}`), ...folders('/sys/fs/cgroup/cpu')]) {
        const quota = read(`${folder}/cpu.cfs_quota_us`);
        const period = read(`${folder}/cpu.cfs_period_us`);
        if (quota === undefined || period === undefined) continue;
        if (Number(quota) > 0) quotas.push(Number(quota) / Number(period));
        break;
      }
    }
  }
  const limits = quotas.filter((q) => Number.isFinite(q) && q > 0);
  return limits.length === 0 ? null : Math.max(1, Math.floor(Math.min(...limits)));
}
