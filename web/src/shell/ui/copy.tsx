import { useState } from 'react';
import { icons } from './icons';

/**
 * A value with a Copy button. `wrap` shows all of a long value (a command) over several lines instead of a field
 * that scrolls and hides its end.
 */
export function CopyField({ value, label, wrap }: { value: string; label: string; wrap?: boolean }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
    } catch {
      // Clipboard access needs a secure context; fall back to selecting the text for a manual copy.
      const node = document.getElementById(`copy-${label}`);
      if (node instanceof HTMLInputElement || node instanceof HTMLTextAreaElement) {
        node.select();
        document.execCommand('copy');
      }
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 1600);
  };
  return (
    <div className={wrap ? 'copy copy-wrap' : 'copy'}>
      {wrap ? (
        <textarea
          id={`copy-${label}`}
          className="copy-value"
          readOnly
          value={value}
          aria-label={label}
          rows={2}
          spellCheck={false}
          onFocus={(e) => e.target.select()}
        />
      ) : (
        <input
          id={`copy-${label}`}
          className="copy-value"
          readOnly
          value={value}
          aria-label={label}
          onFocus={(e) => e.target.select()}
        />
      )}
      <button type="button" className="btn btn-sm" onClick={copy} aria-label={`Copy ${label}`}>
        {copied ? icons.check : icons.copy}
        <span className="hide-small">Copy</span>
      </button>
      {/* Said aloud, not written on the button: its name stays the one it is known by. */}
      <span className="sr-only" role="status">
        {copied ? `Copied the ${label}` : ''}
      </span>
    </div>
  );
}
