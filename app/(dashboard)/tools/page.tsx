import { redirect } from "next/navigation";

// People type /tools; the table lives with the other admin screens.
export default function ToolsAlias() {
  redirect("/admin/tools");
}
