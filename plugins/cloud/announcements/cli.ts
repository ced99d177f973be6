import { readFileSync } from 'node:fs';
import { BadRequest, type CliCommand, defineCommand } from '@gatehouse/core';
import type { Announcement, AnnouncementSummary } from './schemas';

/** The Markdown of `--content` or, with `--content-file` (`-` for standard input), of that file. */
function contentOf(o: { content?: string; contentFile?: string }): string | undefined {
  if (o.content !== undefined && o.contentFile !== undefined)
    throw new BadRequest('give --content or --content-file, not both');
  if (o.contentFile === undefined) return o.content;
  try {
    return readFileSync(o.contentFile === '-' ? 0 : o.contentFile, 'utf8');
  } catch {
    throw new BadRequest(`cannot read ${o.contentFile}`);
  }
}

const content = {
  content: { describe: 'the text, in Markdown', value: '<markdown>' },
  contentFile: { describe: 'a file holding the Markdown text (- for standard input)', value: '<file>' },
} as const;

const publish = defineCommand({
  name: 'publish',
  describe: 'Publish an announcement every user of the console sees once.',
  options: {
    title: { describe: 'title (at most 90 characters)', value: '<title>', required: true },
    ...content,
  },
  async run({ options: o, api, out }) {
    const text = contentOf(o);
    if (text === undefined) throw new BadRequest('give the text with --content or --content-file');
    const made = await api<Announcement>('POST', '/api/admin/announcements', {
      title: o.title,
      content: text,
    });
    out(`published ${made.uuid}`);
  },
});

const edit = defineCommand({
  name: 'edit',
  describe: "Change an announcement's title or text.",
  args: [{ name: 'uuid', describe: 'the announcement' }],
  options: { title: { describe: 'new title (at most 90 characters)', value: '<title>' }, ...content },
  async run({ args, options: o, api, out }) {
    const text = contentOf(o);
    if (o.title === undefined && text === undefined)
      throw new BadRequest('nothing to change: give --title or the text');
    const body = {
      ...(o.title !== undefined ? { title: o.title } : {}),
      ...(text !== undefined ? { content: text } : {}),
    };
    const changed = await api<Announcement>(
      'PATCH',
      `/api/admin/announcements/${encodeURIComponent(args.uuid)}`,
      body,
    );
    out(`changed ${changed.uuid}`);
  },
});

const withdraw = defineCommand({
  name: 'withdraw',
  describe: 'Withdraw (delete) an announcement.',
  args: [{ name: 'uuid', describe: 'the announcement' }],
  async run({ args, api, out }) {
    await api('DELETE', `/api/admin/announcements/${encodeURIComponent(args.uuid)}`);
    out(`withdrew ${args.uuid}`);
  },
});

const list = defineCommand({
  name: 'list',
  describe: 'List the announcements, newest first.',
  async run({ api, out }) {
    for (let page = 1; ; page++) {
      const rows = await api<AnnouncementSummary[]>('GET', `/api/announcements?per_page=100&page=${page}`);
      for (const a of rows) out(`${a.uuid}\t${a.date.slice(0, 10)}\t${a.title}`);
      if (rows.length < 100) break;
    }
  },
});

/** `gatehouse announcement ...`: what the console's instance area does, for instance administrators on the server. */
export const announcementCommands: CliCommand[] = [
  {
    name: 'announcement',
    describe: 'Publish, edit and withdraw announcements.',
    commands: [publish, edit, withdraw, list],
  },
];
