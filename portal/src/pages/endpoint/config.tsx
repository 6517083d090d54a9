import type { components, operations } from '../../api/schema';

/** The endpoint as GET /v3/webhook-config shows it; null while the account has none of its own. */
export type Config = operations['webhookConfig-get']['responses'][200]['content']['application/json'];
type Issue = NonNullable<components['schemas']['Problem']['issues']>[number];

/** The query of the caller's endpoint: what every change of it refreshes. */
export const CONFIG_KEY = ['webhook-config'] as const;

/**
 * The issues a refused change named for one field, under that field (its id `<field>-issue` is what the field cites).
 */
export function FieldIssues({
  issues,
  field,
  idPrefix = '',
}: {
  issues: readonly Issue[];
  field: string;
  idPrefix?: string;
}) {
  const mine = issues.filter((i) => i.path === field || i.path.startsWith(`${field}.`));
  if (mine.length === 0) return null;
  return (
    <p className="issue" id={`${idPrefix}${field}-issue`}>
      {mine.map((i) => i.message).join(' ')}
    </p>
  );
}
