import type { Metadata } from "next";
import Link from "@/components/link";
import type { ReactNode } from "react";
import { UserMenu } from "@/components/auth/user-menu";
import { NavMenu } from "@/components/nav-menu";
import { SignOutEverywhereButton } from "@/components/auth/sign-out-button";
import { getCurrentUser } from "@/lib/server/auth/current-user";
import { can } from "@/lib/server/auth/roles";
import { Providers } from "./providers";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Sagaboard", template: "%s · Sagaboard" },
  description: "The saga log of your agents' tool calls: what happened in the world, and how to answer it.",
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  // Read from the database on every request, so a role change or a disabled account shows at once.
  // This only decides what the header shows; every page checks access itself (requirePageUser).
  const user = await getCurrentUser();
  return (
    <html lang="en">
      <body>
        <Providers>
          {/* The first stop of the keyboard: past the header's links to the page itself. */}
          <a className="skip-link" href="#content">
            Skip to content
          </a>
          <header className="site-header">
            <div className="site-header-inner">
              <Link href="/" className="brand">
                Sagaboard
              </Link>
              {user && (
                <NavMenu
                  links={[
                    { href: "/runs", label: "Runs" },
                    { href: "/overview", label: "Overview" },
                    { href: "/escalations", label: "Escalations" },
                    { href: "/corrections", label: "Corrections" },
                    { href: "/revokes", label: "Revokes" },
                    { href: "/audit", label: "Audit" },
                    { href: "/admin/tools", label: "Tools" },
                    // Admin navigation only for those who may use it; every admin page and endpoint checks again.
                    ...(can(user.role, "users.manage") ? [{ href: "/admin/users", label: "Users" }] : []),
                    ...(can(user.role, "tokens.manage") ? [{ href: "/admin/tokens", label: "Tokens" }, { href: "/admin/webhooks", label: "Notifications" }] : []),
                  ]}
                  extra={
                    <>
                      <Link href="/me/notifications">My notifications</Link>
                      <SignOutEverywhereButton full />
                    </>
                  }
                />
              )}
              <UserMenu user={user} />
            </div>
          </header>
          <main className="page" id="content" tabIndex={-1}>
            {children}
          </main>
        </Providers>
      </body>
    </html>
  );
}
