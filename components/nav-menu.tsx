"use client";

// The header's navigation: a row of links on a wide screen; on a phone, a Menu button that opens the
// same links as a list (a row of ten links scrolled sideways hid half of them with no sign it scrolls).

import { usePathname } from "next/navigation";
import { useEffect, useRef, type ReactNode } from "react";
import Link from "@/components/link";

/** One destination of the header. */
export interface NavLink {
  /** Where it leads. */
  href: string;
  /** What it is called. */
  label: string;
}

/** Whether `pathname` is inside the section `href` names (the runs list is also `/`). */
function current(pathname: string, href: string): boolean {
  if (href === "/runs") return pathname === "/" || pathname.startsWith("/runs");
  return pathname === href || pathname.startsWith(`${href}/`);
}

/** The row (wide screens) and the menu (phones) of the same links; the menu closes when a link is followed. */
export function NavMenu({ links, extra }: { links: readonly NavLink[]; /** What else the phone's menu holds (sign out everywhere, which the phone's header has no room for). */ extra?: ReactNode }) {
  const pathname = usePathname() ?? "/";
  const menu = useRef<HTMLDetailsElement>(null);
  useEffect(() => {
    if (menu.current) menu.current.open = false;
  }, [pathname]);
  const items = links.map((l) => (
    <Link key={l.href} href={l.href} aria-current={current(pathname, l.href) ? "page" : undefined}>
      {l.label}
    </Link>
  ));
  return (
    <>
      <nav aria-label="Main" className="nav-row">
        {items}
      </nav>
      <details ref={menu} className="nav-menu" data-testid="nav-menu">
        <summary>Menu</summary>
        <div className="nav-menu-panel">
          <nav aria-label="Main (menu)">{items}</nav>
          {extra && <div className="nav-menu-extra">{extra}</div>}
        </div>
      </details>
    </>
  );
}
