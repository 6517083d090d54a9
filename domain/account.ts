import { invalid } from './errors.ts';

export type Role = 'brand' | 'partner';
export const ROLES: readonly Role[] = ['brand', 'partner'];

export interface AccountProps {
  id: string;
  name: string;
  role: Role;
  /** Master account of a child partner; null for brands and masters. */
  parentId: string | null;
  createdAt: Date;
}

export class Account {
  id!: string;
  name!: string;
  role!: Role;
  parentId!: string | null;
  createdAt!: Date;

  constructor(props: AccountProps) {
    Object.assign(this, props);
  }

  /** Accounts have two levels at most: only a partner without a master may become one. */
  static create(props: AccountProps, parent: Account | null): Account {
    if (!props.name.trim()) throw invalid('name', 'A name is required.');
    if (props.parentId !== null) {
      if (props.role !== 'partner') throw invalid('parentId', 'Only partner accounts can have a master account.');
      if (!parent || parent.id !== props.parentId) throw invalid('parentId', 'The master account does not exist.');
      if (parent.role !== 'partner') throw invalid('parentId', 'The master account must be a partner account.');
      if (parent.parentId !== null)
        throw invalid('parentId', 'The master account is itself a child; accounts have two levels at most.');
    }
    return new Account(props);
  }
}
