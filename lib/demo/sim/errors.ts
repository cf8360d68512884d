/**
 * Errors as a caller of a real HTTP API sees them. Callers branch on `status`, `code` and
 * `effectHappened`, never on message text, exactly as a connector to the real service would have to.
 */

/** Anything a provider answered instead of a result. */
export class ProviderError extends Error {
  constructor(
    /** HTTP-like, so callers can apply the usual "4xx: nothing happened, 5xx: can't tell" rule. */
    readonly status: number,
    /** Stable and machine-readable, because messages are for people and may change. */
    readonly code: string,
    /** What the response lets the caller know; "unknown" is the outcome reconcile exists for. */
    readonly effectHappened: boolean | "unknown",
    message = `${status} ${code}`,
  ) {
    super(message);
    this.name = "ProviderError";
  }
}

/** A 4xx: the provider refused before doing anything, so the caller may record FAILED. */
export class ProviderRejection extends ProviderError {
  constructor(status = 422, code = "rejected", message?: string) {
    super(status, code, false, message);
    this.name = "ProviderRejection";
  }
}

/** A 5xx: nothing happened in the sim, but a real caller cannot tell that from the response. */
export class ProviderServerError extends ProviderError {
  constructor(status = 503, code = "server_error") {
    super(status, code, "unknown");
    this.name = "ProviderServerError";
  }
}

/** The 504: the gateway stopped waiting, whether or not the effect behind it happened. */
export class ProviderTimeout extends ProviderError {
  constructor() {
    super(504, "gateway_timeout", "unknown");
    this.name = "ProviderTimeout";
  }
}
