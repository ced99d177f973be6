import reference from '@site/generated/reference.json';
import Heading from '@theme/Heading';
import type { ReactNode } from 'react';

interface ConfigKey {
  key: string;
  env?: string;
  default?: unknown;
  description?: string;
  /** The plugin whose setting it is; absent for the server's own. */
  plugin?: string;
}
interface CommandOption {
  flags: string;
  description?: string;
}
interface Command {
  name: string;
  usage?: string;
  description?: string;
  options?: CommandOption[];
}

// The JSON comes from `gatehouse reference --json` at build time (scripts/export-api.mjs).
const config = reference.config as ConfigKey[];
const commands = reference.commands as Command[];

function formatDefault(value: unknown): string {
  if (value === undefined || value === null || value === '') return 'unset';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The keys by owner, in the order listed: the server's own first, then each plugin's. */
function byOwner(): { plugin: string | undefined; keys: ConfigKey[] }[] {
  const groups: { plugin: string | undefined; keys: ConfigKey[] }[] = [];
  for (const item of config) {
    const last = groups.at(-1);
    if (last && last.plugin === item.plugin) last.keys.push(item);
    else groups.push({ plugin: item.plugin, keys: [item] });
  }
  return groups;
}

// Tables scroll sideways on narrow screens (Infima makes each table its own scroll box), so each one is a
// labelled tab stop: a keyboard reader can focus it and scroll it with the arrow keys.
function ConfigTable({ keys, label }: { keys: ConfigKey[]; label: string }): ReactNode {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: the table is its own scroll box; keyboard readers focus it to scroll
    <table data-reference="config" tabIndex={0} aria-label={label}>
      <thead>
        <tr>
          <th>Key</th>
          <th>Environment variable</th>
          <th>Default</th>
          <th>Meaning</th>
        </tr>
      </thead>
      <tbody>
        {keys.map((item) => (
          <tr key={item.key || item.env}>
            <td>{item.key ? <code>{item.key}</code> : '(a file of keys)'}</td>
            <td>{item.env ? <code>{item.env}</code> : '-'}</td>
            <td>
              <code>{formatDefault(item.default)}</code>
            </td>
            <td>{item.description}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function ConfigReference(): ReactNode {
  return (
    <>
      {byOwner().map(({ plugin, keys }) =>
        plugin ? (
          <section key={plugin} data-reference-plugin={plugin}>
            {/* h4 on purpose, as the commands below: the table of contents stays short. */}
            <Heading as="h4" id={`config-plugin-${plugin}`}>
              The {plugin} plugin
            </Heading>
            <p>
              Read only when the <code>{plugin}</code> plugin runs.
            </p>
            <ConfigTable keys={keys} label={`Settings of the ${plugin} plugin`} />
          </section>
        ) : (
          <ConfigTable key="core" keys={keys} label="Settings of the server" />
        ),
      )}
    </>
  );
}

export function CommandReference(): ReactNode {
  return (
    <div data-reference="commands">
      {commands.map((command) => (
        <section key={command.name}>
          {/* h4 on purpose: commands are many and would crowd the table of contents. */}
          <Heading as="h4" id={`command-${command.name}`}>
            <code>{command.name}</code>
          </Heading>
          {command.usage ? (
            // A long usage line scrolls sideways: the block is a tab stop, as Docusaurus makes its code blocks.
            // biome-ignore lint/a11y/noNoninteractiveTabindex: the block is its own scroll box; keyboard readers focus it to scroll
            <pre tabIndex={0}>
              <code>{command.usage}</code>
            </pre>
          ) : null}
          <p>{command.description}</p>
          {command.options && command.options.length > 0 ? (
            <ul>
              {command.options.map((option) => (
                <li key={option.flags}>
                  <code>{option.flags}</code>: {option.description}
                </li>
              ))}
            </ul>
          ) : null}
        </section>
      ))}
    </div>
  );
}
