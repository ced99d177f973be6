import { useState } from 'react';
import { icons } from './icons';

export function CopyField({ value, label }: { value: string; label: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
    } catch {
      // Clipboard access needs a secure context; fall back to selecting the text for a manual copy.
      const node = document.getElementById(`copy-${label}`);
      if (node instanceof HTMLInputElement) {
        node.select();
        document.execCommand('copy');
      }
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 1600);
  };
  return (
    <div className="copy">
      <input
        id={`copy-${label}`}
        className="copy-value"
        readOnly
        value={value}
        aria-label={label}
        onFocus={(e) => e.target.select()}
      />
      <button type="button" className="btn btn-sm" onClick={copy} aria-label={`Copy ${label}`}>
        {copied ? icons.check : icons.copy}
        <span className="hide-small">{copied ? 'Copied' : 'Copy'}</span>
      </button>
    </div>
  );
}
