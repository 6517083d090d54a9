import nodemailer, { type Transporter } from 'nodemailer';
import type { MailMessage } from '../../domain/auth.ts';
import type { Mailer } from '../../domain/ports.ts';

/** Hands messages to an SMTP server (SMTP_URL). */
export class SmtpMailer implements Mailer {
  private readonly transport: Transporter;
  constructor(
    url: string,
    private readonly from: string,
  ) {
    this.transport = nodemailer.createTransport(url);
  }
  async send(message: MailMessage): Promise<void> {
    await this.transport.sendMail({ from: this.from, to: message.to, subject: message.subject, text: message.text });
  }
  close() {
    this.transport.close();
  }
}
