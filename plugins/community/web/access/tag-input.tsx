import { type KeyboardEvent, useId, useState } from 'react';

/**
 * Tags as chips: each tag with its own remove button, a field that adds a tag on Enter or a comma (or when one of
 * the suggested existing tags is picked), and the namespace's existing tags offered as suggestions.
 */
export function TagInput({
  label,
  tags,
  onChange,
  suggestions,
  max = 3,
  hint,
  error,
}: {
  label: string;
  tags: string[];
  onChange: (tags: string[]) => void;
  suggestions: string[];
  max?: number;
  hint?: string;
  error?: string | null;
}) {
  const id = useId();
  const [draft, setDraft] = useState('');
  const add = (raw: string) => {
    const tag = raw.trim();
    setDraft('');
    if (tag && !tags.includes(tag)) onChange([...tags, tag]);
  };
  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if ((event.key === 'Enter' || event.key === ',') && draft.trim()) {
      event.preventDefault();
      add(draft);
    } else if (event.key === 'Backspace' && !draft && tags.length) {
      onChange(tags.slice(0, -1));
    }
  };
  const full = tags.length >= max;
  const offered = suggestions.filter((s) => !tags.includes(s));
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <div className="chip-input input" data-invalid={error ? 'true' : undefined}>
        {tags.map((tag) => (
          <span key={tag} className="chip">
            {tag}
            <button
              type="button"
              aria-label={`Remove tag ${tag}`}
              onClick={() => onChange(tags.filter((t) => t !== tag))}
            >
              ×
            </button>
          </span>
        ))}
        <input
          id={id}
          className="chip-draft"
          list={`${id}-suggestions`}
          value={draft}
          disabled={full}
          placeholder={full ? `${max} tags at most` : 'Add a tag'}
          autoComplete="off"
          aria-describedby={described || undefined}
          aria-invalid={error ? true : undefined}
          onKeyDown={onKeyDown}
          onBlur={() => draft.trim() && add(draft)}
          onChange={(e) => {
            const value = e.target.value;
            // Picking a suggestion from the list adds it at once; typing a comma ends a tag.
            const picked = (e.nativeEvent as InputEvent).inputType === 'insertReplacementText';
            if (picked || value.endsWith(',')) add(value.replace(/,$/, ''));
            else setDraft(value);
          }}
        />
      </div>
      <datalist id={`${id}-suggestions`}>
        {offered.map((s) => (
          <option key={s} value={s} />
        ))}
      </datalist>
      {hint ? (
        <span className="hint" id={`${id}-hint`}>
          {hint}
        </span>
      ) : null}
      {error ? (
        <span className="error" id={`${id}-error`} role="alert">
          {error}
        </span>
      ) : null}
    </div>
  );
}
