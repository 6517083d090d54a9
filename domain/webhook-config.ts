import type { Role } from './account.ts';

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
  createdAt!: Date;
  updatedAt!: Date;

  constructor(props: WebhookConfigProps) {
    Object.assign(this, props);
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
    };
  }
}

/** Format used when a receiver has no configuration of its own (CONTRACT §5, §6). */
export const defaultFormatFor = (scope: Scope): PayloadFormat => ({
  transformer: scope === 'brand' ? 'default' : 'partner-format',
  version: LATEST_VERSION,
});
