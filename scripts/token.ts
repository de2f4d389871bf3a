/**
 * `npm run token -- --sub alice --role customer`: prints a bearer token for local use, signed
 * with JWT_SECRET (the development secret when unset). Production tokens come from your
 * identity provider (JWT_JWKS_URL).
 */
import { ROLES, signToken } from '../src/auth/tokens.js';
import type { Role } from '../src/auth/tokens.js';
import { exitWithUsageError, parseCommandLine } from '../src/cli.js';
import { durationSeconds, loadScriptConfig } from '../src/config/index.js';
import { ID_PATTERN } from '../src/table/keys.js';

const COMMAND = {
  name: 'token',
  run: 'npm run token --',
  usage: `--sub <userId> [--role customer|admin] [--expires 12h]

Prints a bearer token for local use, signed with JWT_SECRET (a development secret when unset).
With JWT_JWKS_URL, tokens come from your identity provider instead.

  --sub <userId>     whose token (1-64 characters of A-Z a-z 0-9 _ -)
  --role <role>      customer (the default) or admin
  --expires <time>   how long it is valid: 12h (the default), 30m, 7d, or seconds`,
  options: {
    sub: { type: 'string' },
    role: { type: 'string', default: 'customer' },
    expires: { type: 'string', default: '12h' },
  },
} as const;

const { values } = parseCommandLine(COMMAND);
const sub = values.sub ?? '';
if (!ID_PATTERN.test(sub)) exitWithUsageError(COMMAND, '--sub needs a userId (1-64 characters of A-Z a-z 0-9 _ -)');
if (!(ROLES as readonly string[]).includes(values.role)) {
  exitWithUsageError(COMMAND, `--role must be ${ROLES.join(' or ')}, not "${values.role}"`);
}
const expiresIn = durationSeconds(values.expires);
if (expiresIn === undefined) {
  exitWithUsageError(COMMAND, `--expires must be a duration such as 3600, 30m, 12h or 7d, not "${values.expires}"`);
}
const config = loadScriptConfig();
if (!config.auth.secret) {
  console.error('token: JWT_SECRET is not set (with JWT_JWKS_URL, tokens come from your identity provider)');
  process.exit(1);
}
console.log(await signToken({ userId: sub, role: values.role as Role }, config.auth, `${expiresIn}s`));
