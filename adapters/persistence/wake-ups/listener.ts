import pg from 'pg';
import type { BackgroundWork } from '../../../domain/ports.ts';
import { WORK_CHANNEL } from './notices.ts';

const KINDS: readonly BackgroundWork[] = ['commands', 'deliveries'];
const RECONNECT_MS = 1000;

/**
 * Wakes this process's worker when any process sharing the server commits background work (LISTEN on the work
 * channel, on a connection of its own outside the pool). A lost connection is made again; since notices may have
 * been missed meanwhile, every kind of work is then announced once.
 */
export function listenForWork(
  url: string,
  wake: (kind: BackgroundWork) => void,
  onError: (error: Error) => void,
): { close(): Promise<void> } {
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const connect = async () => {
    const next = new pg.Client({ connectionString: url });
    next.on('notification', (message) => {
      if ((KINDS as readonly string[]).includes(message.payload ?? '')) wake(message.payload as BackgroundWork);
    });
    next.on('error', (error) => {
      onError(error);
      reconnect(next);
    });
    next.on('end', () => reconnect(next));
    try {
      await next.connect();
      await next.query(`listen ${WORK_CHANNEL}`);
      if (closed) {
        await next.end();
        return;
      }
      client = next;
      for (const kind of KINDS) wake(kind);
    } catch (error) {
      onError(error as Error);
      reconnect(next);
    }
  };
  const reconnect = (lost: pg.Client) => {
    if (closed || (client !== null && client !== lost) || retry) return;
    client = null;
    lost.end().catch(() => {});
    retry = setTimeout(() => {
      retry = undefined;
      void connect();
    }, RECONNECT_MS);
  };
  void connect();

  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      await client?.end().catch(() => {});
    },
  };
}
