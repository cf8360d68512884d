"use client";

// How the dashboard's client components talk to app/api/dashboard/**: JSON in and out, the one error
// body turned into a message a person can act on, and polling for the live parts.

import { useQuery, type QueryKey } from "@tanstack/react-query";
import type { z } from "zod";

/** How often live parts poll, in ms: decisions reach other screens (and waiting agents) within about a second. */
export const LIVE_INTERVAL_MS = 1_000;

/** An error answer of the dashboard API. */
export class DashboardRequestError extends Error {
  constructor(
    message: string,
    /** HTTP status (0 when the server could not be reached). */
    readonly status: number,
    /** The error code (`FORBIDDEN`, `VALIDATION_FAILED`). */
    readonly code: string,
    /** The offending fields (`changes.owner`), when the error is about input. */
    readonly details: readonly { path: string; message: string }[] = [],
  ) {
    super(message);
    this.name = "DashboardRequestError";
  }
}

async function send(url: string, init: RequestInit): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, headers: { accept: "application/json", ...(init.body ? { "content-type": "application/json" } : {}) }, cache: "no-store" });
  } catch {
    throw new DashboardRequestError("The server could not be reached; check your connection. Nothing was changed by this attempt.", 0, "NETWORK");
  }
  const text = await response.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!response.ok) {
    const error = (body as { error?: { message?: unknown; code?: unknown; details?: unknown } } | null)?.error;
    const message = typeof error?.message === "string" ? error.message : `The server answered ${response.status}.`;
    const details = Array.isArray(error?.details)
      ? error.details.filter((d): d is { path: string; message: string } => typeof d?.path === "string" && typeof d?.message === "string")
      : [];
    throw new DashboardRequestError(message, response.status, typeof error?.code === "string" ? error.code : "HTTP_" + response.status, details);
  }
  return body;
}

/** GETs a dashboard route; the answer is unchecked (parse it with the endpoint's schema: `getParsed`). */
export function getJson(url: string): Promise<unknown> {
  return send(url, { method: "GET" });
}

/** POSTs to a dashboard route (same-origin: the server checks the Origin header); the answer is unchecked (`postParsed`). */
export function postJson(url: string, body?: unknown): Promise<unknown> {
  return send(url, { method: "POST", ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

/** Checks an answer of `url` with the endpoint contract's response schema; a mismatch says so in words. */
function parsedAnswer<S extends z.ZodType>(url: string, schema: S, body: unknown): z.output<S> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    throw new DashboardRequestError(
      `The server's answer to ${url} is not what this page expects (${parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}); reload the page.`,
      200,
      "UNEXPECTED_RESPONSE",
    );
  }
  return parsed.data;
}

/** POSTs to a dashboard route and checks the answer with the endpoint contract's response schema. */
export async function postParsed<S extends z.ZodType>(url: string, schema: S, body?: unknown): Promise<z.output<S>> {
  return parsedAnswer(url, schema, await postJson(url, body));
}

/** A message for anything a request threw. */
export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** GETs a dashboard route and checks the answer with the endpoint contract's response schema. */
export async function getParsed<S extends z.ZodType>(url: string, schema: S): Promise<z.output<S>> {
  return parsedAnswer(url, schema, await getJson(url));
}

/**
 * Polls `url` about once a second, starting from the server's first paint (`initial`), so the page
 * shows data at once and then stays current without reloading. Each answer is checked with `schema`
 * (the endpoint contract's response) before the page shows it.
 */
export function useLive<T>(key: QueryKey, url: string, initial: T, schema: z.ZodType<T>): { data: T; error: unknown; refetch: () => Promise<unknown> } {
  const query = useQuery({
    queryKey: key,
    queryFn: () => getParsed(url, schema),
    initialData: initial,
    refetchInterval: LIVE_INTERVAL_MS,
  });
  return { data: query.data ?? initial, error: query.error, refetch: query.refetch };
}

/** A small "live" marker: green while polling works, amber with the reason when it does not. */
export function LiveMarker({ error }: { error: unknown }) {
  if (error) {
    return (
      <span className="live-marker stale" role="status" title={errorMessage(error)}>
        Not updating: {errorMessage(error)}
      </span>
    );
  }
  return (
    <span className="live-marker" title="This page updates itself about once a second.">
      Live
    </span>
  );
}
