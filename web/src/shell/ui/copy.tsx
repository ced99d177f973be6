import { useState } from 'react';
import { icons } from './icons';

export function CopyField({ value, label }: { value: string; label: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
    } catch {
      // Clipboard access needs a secure context; fall back to selecting the text for a manual copy.
      const range = document.createRange();
      const node = document.getElementById(`copy-${label}`);
      if (node) {
        range.selectNodeContents(node);
        window.getSelection()?.removeAllRanges();
        window.getSelection()?.addRange(range);
        document.execCommand('copy');
      }
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 1600);
  };
  return (
    <div className="copy">
      <code id={`copy-${label}`}>{value}</code>
      <button type="button" className="btn btn-sm" onClick={copy} aria-label={`Copy ${label}`}>
        {copied ? icons.check : icons.copy}
        <span className="hide-small">{copied ? 'Copied' : 'Copy'}</span>
      </button>
    </div>
  );
}
