import { useState } from 'react';
import { parseUtcInput } from './dates';

/**
 * A date field that takes and shows the portal's one format (`2026-11-29 05:50:00 UTC`), instead of the browser's
 * date picker, which writes the locale's (`mm/dd/yyyy`) and hides the time zone. Its text is checked when the field
 * is left, and when the form says it was submitted (`checked`).
 */
export function UtcDateInput({
  id,
  label,
  value,
  onChange,
  required = false,
  checked = false,
}: {
  id: string;
  label: string;
  value: string;
  onChange: (text: string) => void;
  required?: boolean;
  checked?: boolean;
}) {
  const [left, setLeft] = useState(false);
  const bad = (left || checked) && (value.trim() === '' ? required : parseUtcInput(value) === null);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type="text"
        autoComplete="off"
        spellCheck={false}
        placeholder="2026-11-29 05:50:00 UTC"
        value={value}
        required={required}
        onChange={(e) => onChange(e.target.value)}
        onBlur={() => setLeft(true)}
        aria-invalid={bad}
        aria-describedby={bad ? `${id}-hint ${id}-issue` : `${id}-hint`}
      />
      <p className="hint muted" id={`${id}-hint`}>
        UTC, as 2026-11-29 05:50:00 UTC; or ISO 8601 with an offset.
      </p>
      {bad && (
        <p className="issue" id={`${id}-issue`}>
          {value.trim() === '' ? 'Enter a date and time.' : `"${value.trim()}" is not a date and time of that form.`}
        </p>
      )}
    </div>
  );
}
