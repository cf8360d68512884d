/**
 * next-auth's endpoints (/api/auth/csrf, /signin/*, /callback/*, /session, /signout). Its POSTs are
 * protected by next-auth's own double-submit CSRF token; the configuration is lib/auth/options.ts.
 */
import NextAuth from "next-auth";
import { authOptions } from "@/lib/auth/options";

const handler = NextAuth(authOptions);

export { handler as GET, handler as POST };
