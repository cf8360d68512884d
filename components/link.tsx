"use client";

import NextLink from "next/link";
import { useState, type ComponentProps } from "react";

/**
 * next/link that prefetches a route once a person shows they may follow the link (the pointer over
 * it, keyboard focus, a touch), not as soon as it scrolls into view. Every screen here is rendered on
 * request, so each viewport prefetch is a request the server answers: the runs list alone has some
 * thirty links (the navigation, a row per run), and prefetching them all after each page view kept
 * the server busy just as the person clicked on (Next's prefetching guide, "Hover-triggered
 * prefetch"). `prefetch={false}` still turns it off altogether.
 */
export default function Link({ prefetch, onMouseEnter, onFocus, onTouchStart, ...props }: ComponentProps<typeof NextLink>) {
  const [intent, setIntent] = useState(false);
  return (
    <NextLink
      {...props}
      prefetch={prefetch === false || !intent ? false : (prefetch ?? null)}
      onMouseEnter={(e) => {
        setIntent(true);
        onMouseEnter?.(e);
      }}
      onFocus={(e) => {
        setIntent(true);
        onFocus?.(e);
      }}
      onTouchStart={(e) => {
        setIntent(true);
        onTouchStart?.(e);
      }}
    />
  );
}
