import { MissingPage } from "@/components/dashboard/missing-page";

export default function RunNotFound() {
  return (
    <MissingPage
      what="This run"
      hint="The link may be mistyped, or the run was recorded in another Sagaboard. Search the runs list by run id, customer or external ref."
      back={{ href: "/", label: "← All runs" }}
    />
  );
}
