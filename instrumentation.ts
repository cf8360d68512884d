/**
 * Runs once when a Next.js server process starts. On Node it stamps each request with its socket's
 * peer address (lib/auth/socket-address.ts), which the sign-in throttle counts per client.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { installPeerStamp } = await import("@/lib/auth/socket-address");
  await installPeerStamp();
}
