import type { Metadata } from "next";
import { headers } from "next/headers";
import { Forbidden } from "@/components/auth/forbidden";
import { forbiddenPageMessage } from "@/lib/server/auth/current-user";
import { PAGE_PATH_HEADER } from "@/lib/server/auth/page-actions";

export const metadata: Metadata = { title: "Not allowed" };

/** The 403 page a denied requirePageUser leads to (Next's forbidden()), saying why and who could. */
export default async function ForbiddenPage() {
  const pathname = (await headers()).get(PAGE_PATH_HEADER) ?? "/";
  return <Forbidden message={await forbiddenPageMessage(pathname)} />;
}
