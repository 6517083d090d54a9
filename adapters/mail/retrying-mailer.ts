import pRetry from 'p-retry';
import type { MailMessage } from '../../domain/auth.ts';
import type { Mailer } from '../../domain/ports.ts';

/** Retries a failed hand-over with backoff, reporting each failed attempt; gives up after the last one. */
export class RetryingMailer implements Mailer {
  constructor(
    private readonly inner: Mailer,
    private readonly onFailedAttempt: (error: Error, attempt: number) => void,
    private readonly retries = 4,
    private readonly minTimeoutMs = 500,
  ) {}
  async send(message: MailMessage): Promise<void> {
    await pRetry(() => this.inner.send(message), {
      retries: this.retries,
      minTimeout: this.minTimeoutMs,
      factor: 3,
      onFailedAttempt: ({ error, attemptNumber }) => this.onFailedAttempt(error, attemptNumber),
    });
  }
}
