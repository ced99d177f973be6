import {
  Alert,
  Button,
  Card,
  defineWebModule,
  Empty,
  formatDate,
  icons,
  PageHeader,
  TextField,
  useAction,
  useApi,
  useResource,
} from '@gatehouse/console';
import { type FormEvent, useState } from 'react';

// The calls this screen makes, as data: the plugin's own routes.
const calls = {
  list: { method: 'GET', path: '/api/hello/greetings' },
  post: { method: 'POST', path: '/api/hello/greetings' },
} as const;

interface Greeting {
  id: number;
  text: string;
  author: string;
  created_at: string;
}

/** The namespace's greetings board: the latest greetings, and a form to post one. */
function GreetingsPage() {
  const api = useApi();
  const greetings = useResource(() => api.page<Greeting>(calls.list, { query: { per_page: 20 } }), [api]);
  const posting = useAction();
  const [text, setText] = useState('');

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const posted = await posting.run(() =>
      api.call(calls.post, { body: { text }, context: 'Could not post the greeting' }),
    );
    if (posted) {
      setText('');
      greetings.reload();
    }
  };

  return (
    <>
      <PageHeader
        title="Greetings"
        description="Say hello to your namespace. Accepted devices say hello too."
      />
      <Card title="Post a greeting">
        <form onSubmit={submit}>
          <TextField
            label="Greeting"
            value={text}
            maxLength={140}
            required
            onChange={(e) => setText(e.target.value)}
          />
          {posting.error ? <Alert>{posting.error}</Alert> : null}
          <Button type="submit" variant="primary" busy={posting.pending} disabled={text.trim() === ''}>
            Post greeting
          </Button>
        </form>
      </Card>
      <Card title={`Latest greetings (${greetings.data?.total ?? 0})`}>
        {greetings.error ? <Alert>{greetings.error}</Alert> : null}
        {greetings.data && greetings.data.items.length === 0 ? <Empty title="No greetings yet" /> : null}
        <ul aria-label="Greetings">
          {(greetings.data?.items ?? []).map((g) => (
            <li key={g.id}>
              <strong>{g.text}</strong> · {g.author} · {formatDate(g.created_at)}
            </li>
          ))}
        </ul>
      </Card>
    </>
  );
}

export default defineWebModule({
  name: 'hello',
  nav: [{ to: '/greetings', label: 'Greetings', icon: icons.plug, section: 'manage', order: 80 }],
  pages: [{ path: '/greetings', title: 'Greetings', component: GreetingsPage }],
});
