import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import type { WebhookTargetPolicy } from '../../domain/ports.ts';

// Only globally routable unicast addresses may receive webhooks; everything ipaddr.js classifies
// otherwise (loopback, private, link-local, CGNAT, multicast, unspecified, reserved, …) is refused.
// IPv4-compatible IPv6 addresses (::/96, deprecated) are classified unicast by ipaddr.js but embed an IPv4 address
// (::7f00:1 is 127.0.0.1): refused outright, as nothing public lives there.
export const isPublicAddress = (address: string) => {
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address();
    else if (v6.parts.slice(0, 6).every((part) => part === 0)) return false;
  }
  return parsed.range() === 'unicast';
};

export class DnsWebhookTargetPolicy implements WebhookTargetPolicy {
  constructor(
    private readonly allowPrivate: boolean,
    private readonly resolve: (host: string) => Promise<string[]> = async (host) =>
      (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address),
  ) {}

  async refusalReason(url: string): Promise<string | null> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return 'The URL is not valid.';
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'The URL must use http or https.';
    if (parsed.username || parsed.password) return 'The URL must not carry credentials.';
    if (this.allowPrivate) return null;
    const host = parsed.hostname.replace(/^\[|\]$/g, '');
    let addresses: string[];
    try {
      addresses = ipaddr.isValid(host) ? [host] : await this.resolve(host);
    } catch {
      return `The host ${host} does not resolve.`;
    }
    if (addresses.length === 0 || !addresses.every(isPublicAddress)) {
      return 'The URL resolves to an address that is not public (loopback, private, link-local, CGNAT, multicast or unspecified).';
    }
    return null;
  }
}
