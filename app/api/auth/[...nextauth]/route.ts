/**
 * next-auth's endpoints (/api/auth/csrf, /signin/*, /callback/*, /session, /signout). Its POSTs are
 * protected by next-auth's own double-submit CSRF token; the configuration is lib/server/auth/options.ts.
 * Password sign-in (POST /callback/credentials) is throttled per account and per client first
 * (lib/server/auth/throttled-sign-in.ts): 429 with Retry-After while blocked.
 */
import NextAuth from "next-auth";
import { authOptions } from "@/lib/server/auth/options";
import { appSignInThrottle, throttleCredentialsSignIn } from "@/lib/server/auth/throttled-sign-in";

const handler = NextAuth(authOptions);

/** next-auth's route context: the catch-all segments. */
type NextAuthContext = { params: Promise<{ nextauth: string[] }> };

async function POST(request: Request, context: NextAuthContext): Promise<Response> {
  return throttleCredentialsSignIn(request, (req) => handler(req, context), appSignInThrottle());
}

export { handler as GET, POST };
