import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { erasePersonalData } from "@/lib/desks/privacy/erase-personal-data";
import { findErasures } from "@/lib/desks/privacy/find-erasures";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { requirePageUser } from "@/lib/server/auth/current-user";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Personal data" };

const PATH = "/admin/personal-data";
type SearchParams = Record<string, string | string[] | undefined>;

/** The form's erasure (a server action: Next.js checks its origin). The subject never goes into the URL. */
async function erase(form: FormData): Promise<void> {
  "use server";
  const { user, denied } = await requirePageUser("users.manage", { returnTo: PATH });
  if (denied) return;
  let message: string;
  let ok = false;
  try {
    const result = await erasePersonalData({ actor: user, subject: String(form.get("subject") ?? ""), reason: String(form.get("reason") ?? ""), now: form.get("when") === "now", whenSettled: form.get("when") === "settled" });
    ok = result.ok || result.reason === "scheduled";
    message = result.ok ? `Erased on ${result.erasedAt.toISOString()}: ${result.steps} step(s) now read "erased on ${result.erasedAt.toISOString().slice(0, 10)}"${result.escalations.length ? `; ${result.escalations.length} escalation(s) raised for steps that can no longer be compensated automatically` : ""}.` : result.message;
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    message = [e.message, ...e.details.map((d) => `${d.path}: ${d.message}`)].join(" ");
  }
  redirect(`${PATH}?${new URLSearchParams({ message, ok: ok ? "1" : "0" }).toString()}`);
}

export default async function PersonalDataPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const { user, denied } = await requirePageUser("users.manage", { returnTo: PATH });
  if (denied) return denied;
  const params = await searchParams;
  const message = typeof params.message === "string" ? params.message : null;
  const erasures = await findErasures({ actor: user });
  return (
    <main>
      <h1>Personal data</h1>
      <p>
        Erasing a person destroys the key their personal fields are sealed under (the tool table says which fields are personal). Every screen, export and
        answer then shows &quot;erased on &lt;date&gt;&quot; in their place; the audit log still verifies. The same as <code>npm run erase</code>.
      </p>
      {message ? <p role={params.ok === "1" ? "status" : "alert"}>{message}</p> : null}
      <form action={erase}>
        <label>
          Subject (the value its tools&apos; subject field held: an email, a customer id)
          <input name="subject" required autoComplete="off" />
        </label>
        <label>
          Reason (kept in the audit log)
          <input name="reason" required maxLength={500} />
        </label>
        <fieldset>
          <legend>If some of their steps could still need their data (not settled, or still revocable)</legend>
          <label>
            <input type="radio" name="when" value="refuse" defaultChecked /> Refuse, naming the runs
          </label>
          <label>
            <input type="radio" name="when" value="settled" /> Erase when those steps settle and their windows close
          </label>
          <label>
            <input type="radio" name="when" value="now" /> Erase now (those steps become escalations: they can no longer be compensated automatically)
          </label>
        </fieldset>
        <button type="submit">Erase</button>
      </form>
      <h2>Erasures</h2>
      <table>
        <thead>
          <tr><th>When</th><th>By</th><th>Why</th><th>Subject hash</th><th>Steps</th><th>Escalations</th></tr>
        </thead>
        <tbody>
          {erasures.map((e) => (
            <tr key={`${e.at.toISOString()}-${e.subjectHash}`}><td>{e.at.toISOString()}</td><td>{e.by}</td><td>{e.reason}</td><td><code>{e.subjectHash}</code></td><td>{e.steps}</td><td>{e.escalations}</td></tr>
          ))}
        </tbody>
      </table>
    </main>
  );
}
