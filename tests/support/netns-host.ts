import { execFileSync } from 'node:child_process';
import { userInfo } from 'node:os';

// A "host" of a test's own: a network namespace joined to this one by a veth pair, so that processes started in it
// (startScript's `netns`) reach this side, and are reached, only over that link, which the test can take down (a
// network partition) and bring back. Needs root and iproute2; `netnsUnavailable` says why not otherwise.

export interface NetnsHost {
  /** The namespace's name, for `ip netns exec`. */
  name: string;
  /** This side's address on the link: servers the host must reach listen on it. */
  outsideIp: string;
  /** The host's own address: its servers are reached there. */
  insideIp: string;
  /** Takes the link down: the host and this side no longer reach each other (connections stay, packets are lost). */
  cut(): void;
  heal(): void;
  destroy(): void;
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });

export function netnsUnavailable(): string | null {
  if (userInfo().uid !== 0) return 'needs root (ip netns)';
  try {
    ip('netns', 'list');
    return null;
  } catch {
    return 'needs iproute2 (ip netns)';
  }
}

/** Namespaces of earlier runs whose process is gone (a run killed before its cleanup): removed, links and all. */
function removeLeftovers() {
  const names = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).match(/pbi-host-\d+/g) ?? [];
  for (const name of names) {
    const pid = Number(name.slice('pbi-host-'.length));
    try {
      process.kill(pid, 0);
    } catch {
      for (const args of [
        ['netns', 'del', name],
        ['link', 'del', `pbi${pid}a`.slice(0, 15)],
      ])
        try {
          ip(...args);
        } catch {
          /* gone already */
        }
    }
  }
}

/** A host on a subnet 10.200.<n>.0/24 that no link of this machine uses yet. */
export function startNetnsHost(): NetnsHost {
  removeLeftovers();
  const used = execFileSync('ip', ['-o', '-4', 'addr'], { encoding: 'utf8' });
  let n = 20 + (process.pid % 200);
  while (used.includes(`10.200.${n}.`)) n = 20 + ((n - 19) % 200);
  const name = `pbi-host-${process.pid}`;
  const [outside, inside] = [`pbi${process.pid}a`.slice(0, 15), `pbi${process.pid}b`.slice(0, 15)];
  const host: NetnsHost = {
    name,
    outsideIp: `10.200.${n}.1`,
    insideIp: `10.200.${n}.2`,
    cut: () => ip('link', 'set', outside, 'down'),
    heal() {
      try {
        ip('link', 'set', outside, 'up');
      } catch {
        /* destroyed already */
      }
    },
    destroy() {
      for (const args of [
        ['netns', 'del', name],
        ['link', 'del', outside],
      ])
        try {
          ip(...args);
        } catch {
          /* gone already */
        }
    },
  };
  try {
    ip('netns', 'add', name);
    ip('link', 'add', outside, 'type', 'veth', 'peer', 'name', inside);
    ip('link', 'set', inside, 'netns', name);
    ip('addr', 'add', `${host.outsideIp}/24`, 'dev', outside);
    ip('link', 'set', outside, 'up');
    ip('netns', 'exec', name, 'ip', 'addr', 'add', `${host.insideIp}/24`, 'dev', inside);
    ip('netns', 'exec', name, 'ip', 'link', 'set', inside, 'up');
    ip('netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up');
  } catch (error) {
    host.destroy();
    throw error;
  }
  return host;
}
