import { isOidcConfigured, oidcGroupsClaim } from "@/lib/server/auth/options";
import { publicBaseUrl } from "@/lib/server/notifications/compose-notification";

/** What the deployment says about single sign-on (its variables), for the users page. */
export function ssoEnvironment(env: NodeJS.ProcessEnv = process.env): { configured: boolean; issuer: string | null; groupsClaim: string; baseUrl: string } {
  return { configured: isOidcConfigured(), issuer: env.OIDC_ISSUER?.trim() || null, groupsClaim: oidcGroupsClaim(), baseUrl: publicBaseUrl(env) };
}
