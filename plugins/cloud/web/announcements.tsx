import { Button, Dialog, formatDate, useApi, useUser } from '@gatehouse/console';
import { useEffect, useState } from 'react';
import type { Announcement, AnnouncementSummary } from '../announcements/schemas';
import { calls } from './api';

/**
 * Shows the newest announcement once per user: dismissed, it stays away until a newer one is published. The server
 * remembers who has seen what, so another browser does not show it again.
 */
export function NewAnnouncement() {
  const api = useApi();
  const user = useUser();
  const [shown, setShown] = useState<Announcement | null>(null);
  useEffect(() => {
    let live = true;
    api
      .call<AnnouncementSummary[]>(calls.listAnnouncements, { query: { per_page: 1 } })
      .then(async ([newest]) => {
        if (!newest) return;
        const { seen } = await api.call<{ seen: boolean }>(calls.announcementSeen, {
          params: { uuid: newest.uuid },
        });
        if (seen) return;
        const full = await api.call<Announcement>(calls.getAnnouncement, { params: { uuid: newest.uuid } });
        if (live) setShown(full);
      })
      .catch(() => {
        // Announcements are news, not work: a failure to load them is not worth an error on every screen.
      });
    return () => {
      live = false;
    };
  }, [api, user.id]);
  if (!shown) return null;
  const close = () => {
    setShown(null);
    // A failure leaves it to show once more next time, which is better than an error over the screen.
    api.call(calls.markAnnouncementSeen, { params: { uuid: shown.uuid } }).catch(() => {});
  };
  return (
    <Dialog
      open
      title={shown.title}
      description={formatDate(shown.date)}
      onClose={close}
      footer={<Button onClick={close}>Got it</Button>}
    >
      {/* The server sanitised this HTML (sanitize-html): no script, handler or unsafe link is left. */}
      {/* biome-ignore lint/security/noDangerouslySetInnerHtml: sanitised by the server, as said above */}
      <div className="announcement" dangerouslySetInnerHTML={{ __html: shown.html }} />
    </Dialog>
  );
}
