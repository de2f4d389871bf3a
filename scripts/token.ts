/**
 * `npm run token -- --sub alice --role customer`: prints a bearer token for local use, signed
 * with JWT_SECRET (the development secret when unset). Production tokens come from your
 * identity provider (JWT_JWKS_URL).
 */
import { parseArgs } from 'node:util';
import { ROLES, signToken } from '../src/auth/tokens.js';
import type { Role } from '../src/auth/tokens.js';
import { loadScriptConfig } from '../src/config/index.js';
import { ID_PATTERN } from '../src/table/keys.js';

const { values } = parseArgs({
  options: {
    sub: { type: 'string' },
    role: { type: 'string', default: 'customer' },
    expires: { type: 'string', default: '12h' },
  },
});
const sub = values.sub ?? '';
if (!ID_PATTERN.test(sub) || !(ROLES as readonly string[]).includes(values.role)) {
  console.error('usage: npm run token -- --sub <userId> [--role customer|admin] [--expires 12h]');
  process.exit(2);
}
const config = loadScriptConfig();
if (!config.auth.secret) {
  console.error('token: JWT_SECRET is not set (with JWT_JWKS_URL, tokens come from your identity provider)');
  process.exit(1);
}
console.log(await signToken({ userId: sub, role: values.role as Role }, config.auth, values.expires));
