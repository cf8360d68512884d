import { redirect } from "next/navigation";
import { requirePageUser } from "@/lib/server/auth/current-user";

// People type /tools; the table lives with the other admin screens (which check again).
export default async function ToolsAlias() {
  const { denied } = await requirePageUser("read", { returnTo: "/admin/tools" });
  if (denied) return denied;
  redirect("/admin/tools");
}
