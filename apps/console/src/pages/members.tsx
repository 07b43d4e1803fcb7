import type { Member, Role } from "@agentry/sdk";
import { useEffect, useId, useState } from "preact/hooks";
import { api } from "../api";
import { ConfirmButton, ErrorMessage, Field, formatTime, TableScroll, useAction } from "../widgets/common";

const ROLES: { role: Role; words: string }[] = [
  { role: "owner", words: "Owner: everything" },
  { role: "admin", words: "Admin: a developer's rights, plus keys and members" },
  { role: "developer", words: "Developer: agents, messages, history, webhooks, plugins" },
  { role: "viewer", words: "Viewer: reads only" },
];

/** Every member of the account, page after page, oldest first. */
async function allMembers(): Promise<Member[]> {
  const members: Member[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await api<Member[]>("GET", "/v1/members", { query: { order: "asc", limit: 100, after } });
    members.push(...page.data);
    if (!page.pagination?.hasMore) return members;
    after = page.data.at(-1)?.id;
  }
}

/** Account settings → Members: who shares the account, with which role; invite, change a role, remove. */
export function MembersPage() {
  const [members, setMembers] = useState<Member[] | null>(null);
  const [notice, setNotice] = useState("");
  const load = useAction(async () => {
    setMembers(await allMembers());
  });
  const change = useAction(async (member: Member, role: Role) => {
    await api("PATCH", `/v1/members/${member.id}`, { body: { role } });
    setNotice(`${member.email ?? member.name} is now ${role}.`);
    await load.run();
  });
  useEffect(() => {
    void load.run();
  }, []);

  return (
    <>
      <p class="muted">
        People who share this account. Each acts with the rights of their role, in the console and in the keys
        they create.
      </p>
      <Invite
        onInvited={(member) => {
          setNotice(`Invited ${member.email} as ${member.role}.`);
          void load.run();
        }}
      />
      <h2>Members</h2>
      <p aria-live="polite" class="notice">
        {notice}
      </p>
      <ErrorMessage error={load.error ?? change.error} />
      {members === null ? (
        <p aria-busy="true">Loading…</p>
      ) : (
        <TableScroll label="Members">
          <table>
            <caption class="visually-hidden">Members</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Added</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {members.map((member) => (
                <tr key={member.id}>
                  <td>{member.name}</td>
                  <td>{member.email ?? <span class="muted">none yet</span>}</td>
                  <td>
                    <select
                      aria-label={`Role of ${member.email ?? member.name}`}
                      value={member.role}
                      disabled={change.busy}
                      onChange={(e) => void change.run(member, e.currentTarget.value as Role)}
                    >
                      {ROLES.map(({ role }) => (
                        <option key={role} value={role}>
                          {role}
                        </option>
                      ))}
                    </select>
                  </td>
                  <td>{formatTime(member.createdAt)}</td>
                  <td>
                    <ConfirmButton
                      label={
                        <>
                          Remove<span class="visually-hidden"> {member.email ?? member.name}</span>
                        </>
                      }
                      title="Remove this member?"
                      message={
                        <p>
                          {member.email ?? member.name} loses access at once and is signed out. Keys they
                          created keep working.
                        </p>
                      }
                      confirmLabel="Remove member"
                      onConfirm={async () => {
                        await api("DELETE", `/v1/members/${member.id}`);
                        setNotice(`Removed ${member.email ?? member.name}.`);
                        await load.run();
                      }}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </>
  );
}

function Invite({ onInvited }: { onInvited: (member: Member) => void }) {
  const id = useId();
  const [email, setEmail] = useState("");
  const [name, setName] = useState("");
  const [role, setRole] = useState<Role>("developer");
  const invite = useAction(async () => {
    const body: Record<string, unknown> = { email: email.trim(), role };
    if (name.trim()) body.name = name.trim();
    const { data } = await api<Member>("POST", "/v1/members", { body });
    setEmail("");
    setName("");
    onInvited(data);
  });
  return (
    <form
      class="card"
      aria-labelledby={`${id}-title`}
      onSubmit={(event) => {
        event.preventDefault();
        void invite.run();
      }}
    >
      <h2 id={`${id}-title`}>Invite a member</h2>
      <Field label="Email" id={`${id}-email`} hint="They sign in with this address.">
        <input
          id={`${id}-email`}
          type="email"
          required
          value={email}
          aria-describedby={`${id}-email-hint`}
          onInput={(e) => setEmail(e.currentTarget.value)}
        />
      </Field>
      <Field label="Name (optional)" id={`${id}-name`}>
        <input
          id={`${id}-name`}
          value={name}
          maxLength={100}
          onInput={(e) => setName(e.currentTarget.value)}
        />
      </Field>
      <Field label="Role" id={`${id}-role`}>
        <select id={`${id}-role`} value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
          {ROLES.map(({ role: value, words }) => (
            <option key={value} value={value}>
              {words}
            </option>
          ))}
        </select>
      </Field>
      <ErrorMessage error={invite.error} />
      <button type="submit" class="primary" disabled={invite.busy || email.trim() === ""}>
        Invite
      </button>
    </form>
  );
}
