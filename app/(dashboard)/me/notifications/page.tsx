import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { MyNotifications } from "@/components/me/my-notifications";
import { getPrisma } from "@/lib/core/db/prisma";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { requirePageUser } from "@/lib/server/auth/current-user";
import { findMyNotifications, saveMyNotifications } from "@/lib/server/notifications/my-notifications";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "My notifications" };

const PATH = "/me/notifications";
type SearchParams = Record<string, string | string[] | undefined>;

/** The form's save (a server action: Next.js checks its origin). Every listed topic is sent: a ticked box is on, an unticked one off. */
async function save(form: FormData): Promise<void> {
  "use server";
  const { user, denied } = await requirePageUser("read", { returnTo: PATH });
  if (denied) return;
  const listed = form.getAll("listed").map(String);
  const choices = Object.fromEntries(listed.map((topic) => [topic, form.get(`email:${topic}`) === "on"]));
  let message = "Saved: the next notification follows these choices.";
  let ok = true;
  try {
    await saveMyNotifications(await getPrisma(), user, choices);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    message = e.message;
    ok = false;
  }
  redirect(`${PATH}?${new URLSearchParams({ message, ok: ok ? "1" : "0" }).toString()}`);
}

export default async function MyNotificationsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const { user, denied } = await requirePageUser("read", { returnTo: PATH });
  if (denied) return denied;
  const params = await searchParams;
  const topics = await findMyNotifications(await getPrisma(), user);
  const message = typeof params.message === "string" ? { text: params.message, ok: params.ok === "1" } : null;
  return <MyNotifications user={user} topics={topics} message={message} save={save} emailConfigured={Boolean(process.env.SAGABOARD_SMTP_URL?.trim())} />;
}
