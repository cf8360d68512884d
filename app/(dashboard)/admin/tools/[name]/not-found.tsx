import { MissingPage } from "@/components/dashboard/missing-page";

export default function ToolNotFound() {
  return (
    <MissingPage
      what="This tool"
      hint="No tool of that name is in the tool table: the name may be mistyped, or its team has not declared it yet (tools are named namespace.tool)."
      back={{ href: "/admin/tools", label: "← The tool table" }}
    />
  );
}
