import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import type { MailMessage } from '../../domain/auth.ts';
import type { Mailer } from '../../domain/ports.ts';

/**
 * Without SMTP: each message becomes an .eml file in the mail folder; only its location is logged, never its content.
 */
export class FileMailer implements Mailer {
  private readonly composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  constructor(
    private readonly dir: string,
    private readonly from: string,
    private readonly onWritten: (path: string) => void,
  ) {}
  async send(message: MailMessage): Promise<void> {
    const info = await this.composer.sendMail({
      from: this.from,
      to: message.to,
      subject: message.subject,
      text: message.text,
    });
    await mkdir(this.dir, { recursive: true });
    const path = join(this.dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomUUID().slice(0, 8)}.eml`);
    await writeFile(path, info.message as Buffer, { mode: 0o600 });
    this.onWritten(path);
  }
}
