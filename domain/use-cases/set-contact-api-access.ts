import { notFound } from '../errors.ts';
import type { Deps } from '../ports.ts';

export async function setContactApiAccess(
  deps: Pick<Deps, 'contacts'>,
  input: { contactId: string; apiAccess: boolean },
): Promise<void> {
  const contact = await deps.contacts.get(input.contactId);
  if (!contact) throw notFound('The contact');
  contact.apiAccess = input.apiAccess;
  await deps.contacts.save(contact);
}
