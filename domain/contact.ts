import { invalid } from './errors.ts';

export interface ContactProps {
  id: string;
  accountId: string;
  email: string;
  apiAccess: boolean;
  createdAt: Date;
}

// Deliberately permissive (RFC 5322 is not worth the regex): one @, no spaces, a dot in the domain.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export const normalizeEmail = (email: string) => email.trim().toLowerCase();
export const isEmail = (email: string) => email.length <= 254 && EMAIL.test(email);

export class Contact {
  id!: string;
  accountId!: string;
  /** Stored as given; compared case-insensitively everywhere. */
  email!: string;
  apiAccess!: boolean;
  createdAt!: Date;

  constructor(props: ContactProps) {
    Object.assign(this, props);
  }

  static create(props: ContactProps): Contact {
    const email = props.email.trim();
    if (!isEmail(email)) throw invalid('email', 'A valid e-mail address is required.');
    return new Contact({ ...props, email });
  }
}
