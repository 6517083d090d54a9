// Bringing your endpoint back after it was disabled for failing, with nothing lost: enable it, then send again what failed.

export interface EndpointConfig {
  url: string | null;
  transformer: string;
  version: string;
  enabled: boolean;
  /** Since when your endpoint has answered no 2xx; null while it is healthy. */
  failingSince: string | null;
  /** `failing`: we disabled it after days of failure; `integrator`: you did (PUT with `enabled: false`). */
  disabledReason: 'failing' | 'integrator' | null;
}

/**
 * A delivery made this long before the endpoint began failing may have failed within it: by default its eight attempts
 * span 27 h 35 min (WEBHOOK_RETRY_SCHEDULE 5s,5m,30m,2h,5h,10h,10h).
 */
const RETRIES_MS = 2 * 24 * 3600 * 1000;

/**
 * Run once your endpoint answers 2xx again. When it was disabled for failing, enables it (PUT, keeping its URL, format and
 * key) and sends again every delivery that failed since shortly before it began failing, each order's in their order.
 * Answers how many deliveries are pending again (0 when there was nothing to heal: healthy, or disabled by you).
 */
export async function healEndpoint(baseUrl: string, accessToken: string): Promise<number> {
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(new URL(path, baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`), {
      method,
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} /${path} answered ${res.status}: ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  const config = (await api('GET', 'v3/webhook-config')) as unknown as EndpointConfig;
  if (config.disabledReason !== 'failing' || !config.failingSince) return 0;
  // Read before the PUT: enabling the endpoint again starts its health afresh (failingSince null).
  const since = new Date(Date.parse(config.failingSince) - RETRIES_MS).toISOString();
  await api('PUT', 'v3/webhook-config', {
    url: config.url,
    transformer: config.transformer,
    version: config.version,
    enabled: true,
  });
  const { count } = await api('POST', 'v3/webhook-deliveries/redeliver-failed', { since });
  return count as number;
}
