import { useState } from 'react';
import type { OperationEntry } from './openapi';
import { useApiServer } from './server';
import styles from './styles.module.css';

interface Answer {
  status: number;
  statusText: string;
  totalCount: string | null;
  body: string;
}

/**
 * Sends the operation to the Gatehouse server the reader set above the reference (never this documentation host);
 * nothing is sent until they press Send.
 */
export default function TryIt({
  entry,
  exampleBody,
}: {
  entry: OperationEntry;
  exampleBody: string | undefined;
}) {
  const [open, setOpen] = useState(false);
  const [server] = useApiServer();
  const [token, setToken] = useState('');
  const [apiKey, setApiKey] = useState('');
  const [values, setValues] = useState<Record<string, string>>({});
  const [body, setBody] = useState(exampleBody ?? '');
  const [answer, setAnswer] = useState<Answer | { error: string } | null>(null);
  const fieldId = (name: string) => `${entry.id}-${name}`;

  async function send() {
    let path = entry.path;
    const query = new URLSearchParams();
    const headers: Record<string, string> = {};
    for (const parameter of entry.parameters) {
      const value = values[`${parameter.in}:${parameter.name}`];
      if (value === undefined || value === '') continue;
      if (parameter.in === 'path') path = path.replace(`{${parameter.name}}`, encodeURIComponent(value));
      else if (parameter.in === 'query') query.set(parameter.name, value);
      else if (parameter.in === 'header') headers[parameter.name] = value;
    }
    if (token) headers.Authorization = `Bearer ${token}`;
    if (apiKey) headers['X-API-Key'] = apiKey;
    if (exampleBody !== undefined) headers['Content-Type'] = 'application/json';
    const url = `${server.replace(/\/$/, '')}${path}${query.size > 0 ? `?${query}` : ''}`;
    try {
      const response = await fetch(url, {
        method: entry.method.toUpperCase(),
        headers,
        body: exampleBody !== undefined ? body : undefined,
      });
      setAnswer({
        status: response.status,
        statusText: response.statusText,
        totalCount: response.headers.get('X-Total-Count'),
        body: await response.text(),
      });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      setAnswer({
        error: `${reason}. Check the server address above, that the server is running, and that it lists this site's origin (${window.location.origin}) in GATEHOUSE_CORS_ORIGINS.`,
      });
    }
  }

  if (!open) {
    return (
      <button type="button" className="button button--sm button--secondary" onClick={() => setOpen(true)}>
        Try it
      </button>
    );
  }
  return (
    <form
      className={styles.tryIt}
      onSubmit={(event) => {
        event.preventDefault();
        void send();
      }}
    >
      <p className={styles.serverHint}>
        Sends to <code>{server || '(no server set)'}</code>; change it under "Server for Try it" above.
      </p>
      <label htmlFor={fieldId('token')}>Bearer token</label>
      <input
        id={fieldId('token')}
        value={token}
        onChange={(e) => setToken(e.target.value)}
        autoComplete="off"
      />
      <label htmlFor={fieldId('apikey')}>API key</label>
      <input
        id={fieldId('apikey')}
        value={apiKey}
        onChange={(e) => setApiKey(e.target.value)}
        autoComplete="off"
      />
      {entry.parameters.map((parameter) => {
        const key = `${parameter.in}:${parameter.name}`;
        return [
          <label key={`${key}-label`} htmlFor={fieldId(key)}>
            {parameter.name} ({parameter.in})
          </label>,
          <input
            key={key}
            id={fieldId(key)}
            value={values[key] ?? ''}
            required={parameter.required}
            onChange={(e) => setValues({ ...values, [key]: e.target.value })}
          />,
        ];
      })}
      {exampleBody !== undefined ? (
        <>
          <label htmlFor={fieldId('body')}>Body</label>
          <textarea id={fieldId('body')} value={body} rows={6} onChange={(e) => setBody(e.target.value)} />
        </>
      ) : null}
      <div>
        <button type="submit" className="button button--sm button--primary">
          Send
        </button>
      </div>
      {answer ? (
        <output className={styles.answer}>
          {'error' in answer ? (
            `Request failed: ${answer.error}`
          ) : (
            <>
              <strong>
                {answer.status} {answer.statusText}
              </strong>
              {answer.totalCount !== null ? ` (X-Total-Count: ${answer.totalCount})` : ''}
              <pre>{answer.body}</pre>
            </>
          )}
        </output>
      ) : null}
    </form>
  );
}
