"use client";

import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { SessionProvider } from "next-auth/react";
import { useState, type ReactNode } from "react";

/**
 * Client-side context for every page: next-auth's session (for `useSession` in client components;
 * authorization never relies on it, the server reads the database per request) and one react-query
 * client per browser tab, for the live queues and timelines.
 */
export function Providers({ children }: { children: ReactNode }) {
  // One client per mount (not module-level), so two server renders never share a cache.
  const [queryClient] = useState(
    () =>
      new QueryClient({
        defaultOptions: {
          queries: { staleTime: 2_000, refetchOnWindowFocus: true, retry: 1 },
        },
      }),
  );
  return (
    <SessionProvider>
      <QueryClientProvider client={queryClient}>{children}</QueryClientProvider>
    </SessionProvider>
  );
}
