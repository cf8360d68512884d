/**
 * The part of `oidc-provider` (which ships no types) that tests/support/oidc-idp.ts uses; kept to
 * what that file calls, so a wrong call still fails the typecheck.
 */
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  interface Grant {
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }
  interface GrantConstructor {
    new (properties: { clientId: string; accountId: string }): Grant;
    find(id: string): Promise<Grant | undefined>;
  }
  interface OidcContext {
    oidc: {
      result?: { consent?: { grantId?: string } };
      session?: { accountId?: string; grantIdFor(clientId: string): string | undefined };
      client?: { clientId: string };
      provider: { Grant: GrantConstructor };
    };
  }
  interface Account {
    accountId: string;
    claims(): Record<string, unknown> | Promise<Record<string, unknown>>;
  }
  export interface Configuration {
    clients: Record<string, unknown>[];
    pkce?: { required?: () => boolean };
    claims?: Record<string, string[]>;
    conformIdTokenClaims?: boolean;
    cookies?: { keys: string[] };
    features?: Record<string, { enabled: boolean }>;
    interactions?: { url: (ctx: OidcContext, interaction: { uid: string }) => string };
    findAccount: (ctx: OidcContext, sub: string) => Account | undefined | Promise<Account | undefined>;
    loadExistingGrant?: (ctx: OidcContext) => Promise<Grant | undefined>;
  }
  export default class Provider {
    constructor(issuer: string, configuration: Configuration);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<{ uid: string; prompt: { name: string } }>;
    interactionFinished(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<void>;
  }
}
