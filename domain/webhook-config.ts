import type { Role } from './account.ts';
import type { DisabledReason } from './endpoint-health.ts';

export type Scope = Role;
export type Transformer = 'default' | 'partner-format';
export type PayloadVersion = '1.0.0' | '1.1.0' | '1.3.0';

export const SCOPES: readonly Scope[] = ['brand', 'partner'];
export const TRANSFORMERS: readonly Transformer[] = ['default', 'partner-format'];
export const PAYLOAD_VERSIONS: readonly PayloadVersion[] = ['1.0.0', '1.1.0', '1.3.0'];
const LATEST_VERSION: PayloadVersion = '1.3.0';

export interface PayloadFormat {
  transformer: Transformer;
  version: PayloadVersion;
}

export interface WebhookConfigProps {
  id: string;
  accountId: string;
  scope: Scope;
  url: string | null;
  transformer: Transformer;
  version: PayloadVersion;
  signatureKey: string | null;
  enabled: boolean;
  /** Endpoint health (CONTRACT §11): written by the record of attempts, never by a save (see the repository). */
  failingSince: Date | null;
  disabledReason: DisabledReason | null;
  failureMailedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The fewest characters a signature key may have (CONTRACT §7). */
export const SIGNATURE_KEY_MIN_LENGTH = 16;

export class WebhookConfig {
  id!: string;
  accountId!: string;
  scope!: Scope;
  url!: string | null;
  transformer!: Transformer;
  version!: PayloadVersion;
  signatureKey!: string | null;
  enabled!: boolean;
  failingSince!: Date | null;
  disabledReason!: DisabledReason | null;
  failureMailedAt!: Date | null;
  createdAt!: Date;
  updatedAt!: Date;

  constructor(props: WebhookConfigProps) {
    Object.assign(this, props);
  }

  /**
   * Enabled, or disabled by the integrator. A new URL, or enabling again what was disabled, starts its health afresh:
   * it fails only from its next attempt without a 2xx.
   */
  configure(url: string | null, enabled: boolean): void {
    if (url !== this.url || (enabled && !this.enabled)) this.failingSince = null;
    this.url = url;
    this.enabled = enabled;
    this.disabledReason = enabled ? null : 'integrator';
  }

  payloadFormat(): PayloadFormat {
    return { transformer: this.transformer, version: this.version };
  }

  /** What integrators and tools see: the key itself is never shown. */
  view() {
    return {
      accountId: this.accountId,
      scope: this.scope,
      url: this.url,
      transformer: this.transformer,
      version: this.version,
      enabled: this.enabled,
      hasSignatureKey: this.signatureKey !== null,
      failingSince: this.failingSince?.toISOString() ?? null,
      disabledReason: this.disabledReason,
    };
  }
}

/** Format used when a receiver has no configuration of its own (CONTRACT §5, §6). */
export const defaultFormatFor = (scope: Scope): PayloadFormat => ({
  transformer: scope === 'brand' ? 'default' : 'partner-format',
  version: LATEST_VERSION,
});
