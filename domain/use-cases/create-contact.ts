import { Contact } from '../contact.ts';
import { conflict, notFound } from '../errors.ts';
import type { Deps } from '../ports.ts';

export interface CreateContactInput {
  accountId: string;
  email: string;
  apiAccess?: boolean;
}

export async function createContact(
  deps: Pick<Deps, 'accounts' | 'contacts' | 'clock' | 'ids'>,
  input: CreateContactInput,
): Promise<Contact> {
  const contact = Contact.create({
    id: deps.ids.newId(),
    accountId: input.accountId,
    email: input.email,
    apiAccess: input.apiAccess ?? true,
    createdAt: deps.clock.now(),
  });
  if (!(await deps.accounts.get(input.accountId))) throw notFound('The account');
  if (await deps.contacts.findByEmail(contact.email))
    throw conflict('A contact with this e-mail address exists already.');
  await deps.contacts.save(contact);
  return contact;
}
