/** Liveness probe: answers as soon as the server can handle requests (it does not touch the database). */
export function GET(): Response {
  return Response.json({ ok: true });
}
