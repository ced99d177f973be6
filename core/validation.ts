import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';

/** One ajv setup for config, route schemas and tests: all errors off (first error names the field), formats on. */
export function createAjv(opts: { coerceTypes?: boolean | 'array' } = {}): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    strict: false,
    coerceTypes: opts.coerceTypes ?? false,
    useDefaults: true,
    removeAdditional: false,
  });
  addFormats.default(ajv);
  return ajv;
}
