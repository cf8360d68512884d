/**
 * A real OpenID Connect provider for the tests: the `oidc-provider` package (a certified OP), on
 * 127.0.0.1 and a free port, with a login form of its own (username and password, checked against
 * the people the test gives it), PKCE required, one confidential client (Sagaboard), and each
 * person's email and groups as claims (the groups claim in the ID token, as providers configured for
 * group claims send it). It records what each authorization request carried (state, PKCE challenge),
 * so a test can show that Sagaboard sent them.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Provider, { type Configuration } from "oidc-provider";

/** Someone who can sign in at the provider. */
export interface IdpPerson {
  /** What they type into the login form. */
  username: string;
  /** Their password at the provider. */
  password: string;
  /** The email claim (verified). */
  email: string;
  /** The name claim. */
  name: string;
  /** The groups claim. */
  groups: string[];
}

/** What an authorization request carried. */
export interface AuthorizationRequest {
  state: string | null;
  codeChallenge: string | null;
  codeChallengeMethod: string | null;
  scope: string | null;
}

/** A running provider. */
export interface TestIdp {
  /** Its issuer (OIDC_ISSUER). */
  issuer: string;
  /** The client Sagaboard is (OIDC_CLIENT_ID / OIDC_CLIENT_SECRET). */
  clientId: string;
  clientSecret: string;
  /** Adds (or replaces) a person who can sign in. */
  addPerson(person: IdpPerson): void;
  /** The authorization requests seen, oldest first. */
  authorizations: AuthorizationRequest[];
  /**
   * Rewrites the provider's redirects to Sagaboard's callback (a test forging what arrives there, such
   * as another state); null: sent as the provider made them.
   */
  rewriteCallback: ((location: URL) => URL) | null;
  /** Stops it. */
  close(): Promise<void>;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function loginPage(uid: string, error: string | null): string {
  return `<!doctype html><html><head><title>Test identity provider: sign in</title></head><body>
<h1>Sign in to the test identity provider</h1>
${error ? `<p role="alert">${escapeHtml(error)}</p>` : ""}
<form method="post" action="/interaction/${escapeHtml(uid)}">
<label>Username <input name="username" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Sign in at the provider</button>
</form></body></html>`;
}

async function formBody(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

/** Starts a provider whose one client redirects to `redirectUri` (Sagaboard's /api/auth/callback/oidc). */
export async function startTestIdp(options: { redirectUri: string; clientId?: string; clientSecret?: string }): Promise<TestIdp> {
  const people = new Map<string, IdpPerson>();
  const authorizations: AuthorizationRequest[] = [];
  const clientId = options.clientId ?? "sagaboard";
  const clientSecret = options.clientSecret ?? `secret-${Math.random().toString(36).slice(2)}`;
  let handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.writeHead(503).end();
  const server: Server = createServer((req, res) => handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const configuration: Configuration = {
    clients: [
      { client_id: clientId, client_secret: clientSecret, redirect_uris: [options.redirectUri], response_types: ["code"], grant_types: ["authorization_code"], token_endpoint_auth_method: "client_secret_basic" },
    ],
    pkce: { required: () => true },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"], groups: ["groups"] },
    // The groups claim goes into the ID token, as providers configured for group claims do.
    conformIdTokenClaims: false,
    cookies: { keys: ["a-test-only-cookie-key-of-enough-length"] },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx, sub) => {
      const person = people.get(sub);
      if (!person) return undefined;
      return { accountId: sub, claims: () => ({ sub, email: person.email, email_verified: true, name: person.name, groups: person.groups }) };
    },
    // A first-party client: no consent screen, the requested scopes are granted.
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session!.grantIdFor(ctx.oidc.client!.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope("openid email profile groups");
      await grant.save();
      return grant;
    },
  };
  const provider = new Provider(issuer, configuration);
  const callback = provider.callback();

  const idp: { rewriteCallback: TestIdp["rewriteCallback"] } = { rewriteCallback: null };
  handle = (req, res) => {
    // The provider (koa) sets its redirects with setHeader("Location", ...): the place to forge one.
    const setHeader = res.setHeader.bind(res);
    res.setHeader = (name: string, value: number | string | readonly string[]) => {
      if (name.toLowerCase() === "location" && typeof value === "string" && idp.rewriteCallback && value.startsWith(options.redirectUri)) {
        return setHeader(name, idp.rewriteCallback(new URL(value)).toString());
      }
      return setHeader(name, value);
    };
    void (async () => {
      const url = new URL(req.url ?? "/", issuer);
      if (url.pathname === "/auth") {
        authorizations.push({
          state: url.searchParams.get("state"),
          codeChallenge: url.searchParams.get("code_challenge"),
          codeChallengeMethod: url.searchParams.get("code_challenge_method"),
          scope: url.searchParams.get("scope"),
        });
      }
      const interaction = /^\/interaction\/([^/]+)$/.exec(url.pathname);
      if (!interaction) return callback(req, res);
      const details = await provider.interactionDetails(req, res);
      if (req.method === "GET") {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(loginPage(details.uid, null));
        return;
      }
      const form = await formBody(req);
      const person = [...people.values()].find((p) => p.username === form.get("username"));
      if (!person || person.password !== form.get("password")) {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(loginPage(details.uid, "Wrong username or password."));
        return;
      }
      await provider.interactionFinished(req, res, { login: { accountId: person.username } }, { mergeWithLastSubmission: false });
    })().catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(`test identity provider: ${e instanceof Error ? e.message : String(e)}`);
    });
  };

  return {
    issuer,
    clientId,
    clientSecret,
    addPerson: (person) => people.set(person.username, person),
    authorizations,
    get rewriteCallback() {
      return idp.rewriteCallback;
    },
    set rewriteCallback(rewrite) {
      idp.rewriteCallback = rewrite;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
