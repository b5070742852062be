// Test-only OAuth 2.1 authorization server for toolwright's resource-server tests.
//
// Built on oidc-provider 9.x (panva). Never use this outside tests: client
// secrets are plain text, keys are generated at start-up and kept in memory.
//
// Usage:
//   node server.mjs [--port N] [--config JSON | --config @file.json] [--exit-with-stdin]
//   env: OAUTH_PORT (or PORT), OAUTH_SERVER_CONFIG (JSON, or @path to a JSON file)
// Port 0 (the default) picks a free port. Once listening it prints exactly one
// line on stdout:
//   {"issuer":"http://127.0.0.1:PORT","port":PORT,"token_endpoint":...,...}
// Everything else (request log, oidc-provider notices) goes to stderr. With --exit-with-stdin it
// exits when its stdin closes: a test that started it holds the pipe, so the server ends with
// the test process however that ends.
//
// Config (all fields optional):
// {
//   "clients": [ { "client_id": "a", "client_secret": "s",
//                  "token_endpoint_auth_method": "client_secret_basic" | "client_secret_post",
//                  "scope": "notes:read notes:write",      // scopes this client may request
//                  "introspection": true } ],              // may introspect any token
//   "resources": { "http://127.0.0.1:9000/mcp": { "scope": "notes:read notes:write",
//                                                 "format": "jwt" | "opaque",
//                                                 "ttl": 600 } },
//   "accessTokenFormat": "jwt",      // format for resources not listed in "resources"
//   "accessTokenTTL": 600,           // seconds
//   "allowAnyResource": true,        // accept any absolute resource indicator
//   "scopes": ["extra:scope"],       // more scopes the AS knows (client scopes are added)
//   "registration": true             // RFC 7591 dynamic client registration at /reg
// }
// With no "clients", the default clients below are used.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import process from 'node:process';

// oidc-provider prints its NOTICEs with console.info (stdout); keep stdout for the
// single "listening" JSON line.
console.info = (...args) => console.error(...args);
console.log = (...args) => console.error(...args);

const { default: Provider, errors } = await import('oidc-provider');

function argValue(name) {
  const i = process.argv.indexOf(name);
  if (i !== -1 && i + 1 < process.argv.length) return process.argv[i + 1];
  const pref = `${name}=`;
  const hit = process.argv.find((a) => a.startsWith(pref));
  return hit === undefined ? undefined : hit.slice(pref.length);
}

function loadJson(text) {
  if (text === undefined || text === '') return {};
  if (text.startsWith('@')) return JSON.parse(readFileSync(text.slice(1), 'utf8'));
  return JSON.parse(text);
}

const positionalPort = process.argv.slice(2).find((a) => /^\d+$/.test(a));
const port = Number(argValue('--port') ?? positionalPort ?? process.env.OAUTH_PORT ?? process.env.PORT ?? 0);
const config = loadJson(argValue('--config') ?? process.env.OAUTH_SERVER_CONFIG);

const DEFAULT_CLIENTS = [
  { client_id: 'mcp-basic', client_secret: 'mcp-basic-secret', token_endpoint_auth_method: 'client_secret_basic', scope: 'notes:read notes:write' },
  { client_id: 'mcp-post', client_secret: 'mcp-post-secret', token_endpoint_auth_method: 'client_secret_post', scope: 'notes:read notes:write' },
  { client_id: 'mcp-readonly', client_secret: 'mcp-readonly-secret', token_endpoint_auth_method: 'client_secret_basic', scope: 'notes:read' },
  { client_id: 'introspector', client_secret: 'introspector-secret', token_endpoint_auth_method: 'client_secret_basic', scope: '', introspection: true },
];

const clientsIn = config.clients ?? DEFAULT_CLIENTS;
const introspectors = new Set(clientsIn.filter((c) => c.introspection).map((c) => c.client_id));
const clientScopes = new Map(clientsIn.map((c) => [c.client_id, new Set((c.scope ?? '').split(' ').filter(Boolean))]));

const knownScopes = new Set(['openid', 'offline_access', ...(config.scopes ?? [])]);
for (const c of clientsIn) for (const s of (c.scope ?? '').split(' ').filter(Boolean)) knownScopes.add(s);
for (const r of Object.values(config.resources ?? {})) for (const s of (r.scope ?? '').split(' ').filter(Boolean)) knownScopes.add(s);
const resourceScopeDefault = [...knownScopes].filter((s) => s !== 'openid' && s !== 'offline_access').join(' ');

const clients = clientsIn.map((c) => ({
  client_id: c.client_id,
  client_secret: c.client_secret,
  token_endpoint_auth_method: c.token_endpoint_auth_method ?? 'client_secret_basic',
  grant_types: c.grant_types ?? ['client_credentials'],
  response_types: c.response_types ?? [],
  redirect_uris: c.redirect_uris ?? [],
  // openid/offline_access are always allowed so that a generic MCP client that requests the
  // AS's whole scopes_supported list is not refused; tokens for a resource only ever carry the
  // resource's scopes (see getResourceServerInfo), so they never contain these two.
  ...(c.scope ? { scope: `openid offline_access ${c.scope}` } : {}),
}));

const defaultFormat = config.accessTokenFormat ?? 'jwt';
const defaultTTL = config.accessTokenTTL ?? 600;
const allowAnyResource = config.allowAnyResource ?? true;

// RS256 signing key, published at jwks_uri.
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingJwk = { ...privateKey.export({ format: 'jwk' }), kid: `test-rs256-${randomUUID().slice(0, 8)}`, alg: 'RS256', use: 'sig' };

// Listen first so that port 0 resolves before the issuer is fixed.
const server = http.createServer();
// Node closes a connection left idle for 5 s, the same time after which httpx stops reusing one:
// a client whose next request crosses that close reads "Server disconnected without sending a
// response". A test's clients may pause that long on a loaded machine, so connections are kept
// for longer than any test takes.
server.keepAliveTimeout = 300_000;
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(port, '127.0.0.1', resolve);
});
const actualPort = server.address().port;
const issuer = `http://127.0.0.1:${actualPort}`;

const provider = new Provider(issuer, {
  clients,
  jwks: { keys: [signingJwk] },
  scopes: [...knownScopes],
  cookies: { keys: ['toolwright-test-cookie-key'] },
  ttl: {
    AccessToken: (ctx, token) => token.resourceServer?.accessTokenTTL ?? defaultTTL,
    ClientCredentials: (ctx, token) => token.resourceServer?.accessTokenTTL ?? defaultTTL,
  },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: {
      enabled: true,
      // Dedicated introspecting clients may introspect anything; other clients only their own tokens.
      allowedPolicy: async (ctx, client, token) => introspectors.has(client.clientId) || token.clientId === client.clientId,
    },
    revocation: { enabled: true },
    registration: { enabled: config.registration ?? true },
    resourceIndicators: {
      enabled: true,
      defaultResource: async (ctx, client, oneOf) => oneOf ?? undefined,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (ctx, resourceIndicator, client) => {
        const known = config.resources?.[resourceIndicator];
        if (!known && !allowAnyResource) {
          throw new errors.InvalidTarget(`unknown resource ${resourceIndicator}`);
        }
        const allowed = clientScopes.get(client.clientId);
        let scope = known?.scope ?? resourceScopeDefault;
        // Dynamically registered clients have no configured allow-list; everything else is
        // limited to what the client was configured with.
        if (allowed) scope = scope.split(' ').filter((s) => allowed.has(s)).join(' ');
        const format = known?.format ?? defaultFormat;
        return {
          scope,
          audience: resourceIndicator,
          accessTokenTTL: known?.ttl ?? defaultTTL,
          accessTokenFormat: format,
          ...(format === 'jwt' ? { jwt: { sign: { alg: 'RS256' } } } : {}),
        };
      },
    },
  },
  // RFC 9068 JWT access tokens: oidc-provider sets typ "at+jwt", iss, sub (client_id for
  // client_credentials), aud, client_id, scope, iat, exp, jti.
});
provider.proxy = false;

// Request log on stderr so tests / humans can see what clients sent.
provider.use(async (ctx, next) => {
  await next();
  const body = ctx.oidc?.body ? { ...ctx.oidc.body } : undefined;
  if (body?.client_secret) body.client_secret = '***';
  const auth = ctx.get('authorization');
  const entry = {
    as: 'request',
    method: ctx.method,
    path: ctx.path,
    query: ctx.querystring || undefined,
    authorization: auth ? auth.split(' ')[0] : undefined,
    basic_client_id: auth?.startsWith('Basic ')
      ? decodeURIComponent(Buffer.from(auth.slice(6), 'base64').toString().split(':')[0])
      : undefined,
    body,
    status: ctx.status,
    error: ctx.status >= 400 ? ctx.body?.error : undefined,
    error_description: ctx.status >= 400 ? ctx.body?.error_description : undefined,
  };
  process.stderr.write(`${JSON.stringify(entry)}\n`);
});

server.on('request', provider.callback());

process.stdout.write(`${JSON.stringify({
  issuer,
  port: actualPort,
  token_endpoint: `${issuer}/token`,
  introspection_endpoint: `${issuer}/token/introspection`,
  jwks_uri: `${issuer}/jwks`,
  registration_endpoint: config.registration === false ? undefined : `${issuer}/reg`,
  kid: signingJwk.kid,
})}\n`);

const shutdown = () => server.close(() => process.exit(0));
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
if (process.argv.includes('--exit-with-stdin')) {
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('close', () => process.exit(0));
  process.stdin.resume();
}
