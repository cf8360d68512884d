/**
 * Where to send a person after signing in. Only same-site paths are accepted: an absolute URL,
 * a protocol-relative `//evil.example` or a backslash trick would turn the sign-in page into an
 * open redirect. Safe to import from client components (no server code).
 */

/** The path to return to after signing in, or "/" when `value` is missing or not a same-site path. */
export function safeReturnPath(value: unknown): string {
  if (typeof value !== "string" || value.length > 2000) return "/";
  if (!value.startsWith("/") || value.startsWith("//") || value.includes("\\")) return "/";
  // Control characters (tab, newline) are stripped by URL parsers and could rebuild a `//`.
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return "/";
  }
  if (value === "/signin" || value.startsWith("/signin?") || value.startsWith("/api/")) return "/";
  return value;
}

/** `/signin`, asking to come back to `returnTo` afterwards, with an optional error code to explain. */
export function signInPath(returnTo: string | undefined, error?: string): string {
  const params = new URLSearchParams();
  const back = safeReturnPath(returnTo);
  if (back !== "/") params.set("callbackUrl", back);
  if (error) params.set("error", error);
  const query = params.toString();
  return query ? `/signin?${query}` : "/signin";
}
