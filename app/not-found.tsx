import type { Metadata } from "next";
import { MissingPage } from "@/components/dashboard/missing-page";

export const metadata: Metadata = { title: "Not found" };

/**
 * Any address no page answers (a mistyped path, an old bookmark): the dashboard's header, what
 * happened, and a way back, instead of Next's bare "This page could not be found."
 */
export default function NotFound() {
  return (
    <MissingPage
      what="This page"
      hint="The address may be mistyped or out of date. Start again from the runs list, or open the escalation queue."
      back={{ href: "/", label: "← All runs" }}
    />
  );
}
