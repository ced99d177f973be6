import { Marked } from 'marked';
import sanitizeHtml from 'sanitize-html';

// One parser of our own: marked's default instance is shared module state that any import could reconfigure.
const markdown = new Marked({ gfm: true, breaks: false, async: false });

/**
 * An announcement's Markdown as HTML safe to put in a page: marked parses it, then sanitize-html keeps only the
 * tags and attributes of ordinary text (no script, style, iframe, event handler or `javascript:` link), and every
 * link opens apart from the console without handing it the opener.
 */
export function renderAnnouncement(content: string): string {
  const html = markdown.parse(content) as string;
  return sanitizeHtml(html, {
    allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'del'],
    allowedAttributes: {
      a: ['href', 'title', 'rel', 'target'],
      img: ['src', 'alt', 'title'],
      code: ['class'],
    },
    allowedSchemes: ['http', 'https', 'mailto'],
    allowedSchemesByTag: { img: ['https'] },
    transformTags: {
      a: sanitizeHtml.simpleTransform('a', { rel: 'noopener noreferrer nofollow', target: '_blank' }),
    },
  });
}
