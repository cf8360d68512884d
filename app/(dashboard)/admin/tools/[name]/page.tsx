import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { ToolPage } from "@/components/admin/tool-page";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { requirePageUser } from "@/lib/server/auth/current-user";
import { getTool } from "@/lib/server/tools/get-tool";

export const dynamic = "force-dynamic";

export async function generateMetadata({ params }: { params: Promise<{ name: string }> }): Promise<Metadata> {
  return { title: decodeURIComponent((await params).name) };
}

export default async function ToolDetailPage({ params }: { params: Promise<{ name: string }> }) {
  const name = decodeURIComponent((await params).name);
  const { user, denied } = await requirePageUser("read", { returnTo: `/admin/tools/${encodeURIComponent(name)}` });
  if (denied) return denied;
  try {
    return <ToolPage detail={await getTool({ actor: user, name })} />;
  } catch (e) {
    if (!(e instanceof ApiError) || e.code !== "NOT_FOUND") throw e;
    notFound();
  }
}
