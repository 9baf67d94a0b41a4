"""ExecutionRAG's requirement register and the two invariants enforced outside the model."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

STATUSES = ("pending", "active", "resolved", "retired")
OPEN_STATUSES = frozenset({"pending", "active"})
_NOTE_PREVIEW = 80


@dataclass
class RegisterItem:
    """One requirement: a sub-question, its status, an evidence note and its supporting chunks."""

    item_id: str
    sub_question: str
    status: str = "pending"
    note: str = ""
    supporting_chunk_ids: list[str] = field(default_factory=list)
    reason: str | None = None

    @property
    def is_open(self) -> bool:
        return self.status in OPEN_STATUSES


@dataclass
class ItemChange:
    """One item's transition between two register states (from_status None: a new item)."""

    item_id: str
    sub_question: str
    from_status: str | None
    to_status: str
    note: str
    reason: str | None
    supporting_chunk_ids: list[str]
    note_changed: bool
    added_chunk_ids: list[str]

    @property
    def material(self) -> bool:
        """A status or note change (or a new item): what the progress delta reports."""
        return self.from_status != self.to_status or self.note_changed


@dataclass
class Proposal:
    """The model's proposed change to one item; None fields leave that part untouched."""

    item_id: str
    status: str | None = None
    note: str | None = None
    supporting_chunk_ids: list[str] | None = None
    reason: str | None = None


@dataclass
class UpdateOutcome:
    """The register after an update, its changes, and the invariant violations that were undone."""

    register: Register
    changes: list[ItemChange]
    violations: list[str]


class Register:
    """The ordered items of one question's requirement register."""

    def __init__(self, items: list[RegisterItem] | None = None):
        self.items: dict[str, RegisterItem] = {i.item_id: i for i in items or []}

    @classmethod
    def initial(cls, sub_questions: list[str]) -> Register:
        """Items R1..Rn; the first active (the first search target), the rest pending, notes empty."""
        return cls([RegisterItem(f"R{i}", q, "active" if i == 1 else "pending")
                    for i, q in enumerate(sub_questions, start=1)])

    def copy(self) -> Register:
        return Register(copy.deepcopy(list(self.items.values())))

    def open_items(self) -> list[RegisterItem]:
        return [i for i in self.items.values() if i.is_open]

    @property
    def is_clear(self) -> bool:
        """No item is open: the agent may answer."""
        return not self.open_items()

    def supporting_chunk_ids(self) -> list[str]:
        """Every supporting chunk of every item, first occurrence order."""
        ids = [c for item in self.items.values() for c in item.supporting_chunk_ids]
        return list(dict.fromkeys(ids))

    def render(self) -> str:
        """The full register, one line per item, as shown to the model."""
        lines = []
        for item in self.items.values():
            line = f"{item.item_id} [{item.status}] {item.sub_question}"
            if item.note:
                line += f" | note: {item.note}"
            if item.supporting_chunk_ids:
                line += f" | evidence: {', '.join(item.supporting_chunk_ids)}"
            lines.append(line)
        return "\n".join(lines)

    def next_item_id(self) -> str:
        return f"R{len(self.items) + 1}"


def initial_changes(register: Register) -> list[ItemChange]:
    """The creation events of a freshly built register."""
    return [ItemChange(i.item_id, i.sub_question, None, i.status, i.note, None, [], False, [])
            for i in register.items.values()]


def select_active(register: Register, stalled: frozenset[str] | set[str] = frozenset()
                  ) -> tuple[RegisterItem | None, list[ItemChange]]:
    """SelectActiveRequirement: the first active item, unless its search has stalled (brought nothing
    new) and a fresh pending item exists; then the stalled one goes back to pending."""
    active = [i for i in register.items.values() if i.status == "active"]
    pending = [i for i in register.items.values() if i.status == "pending"]
    for item in active:
        if item.item_id not in stalled:
            return item, []
    fresh = next((i for i in pending if i.item_id not in stalled), None)
    if fresh is None:
        if active:
            return active[0], []
        if not pending:
            return None, []
        fresh = pending[0]
    changes = []
    for item in active:
        item.status = "pending"
        changes.append(_status_change(item, "active", "its last search brought no new evidence"))
    fresh.status = "active"
    changes.append(_status_change(fresh, "pending", "selected as the next search target"))
    return fresh, changes


def _status_change(item: RegisterItem, from_status: str, reason: str) -> ItemChange:
    return ItemChange(item.item_id, item.sub_question, from_status, item.status, item.note, reason,
                      list(item.supporting_chunk_ids), False, [])


def compose_query(question: str, item: RegisterItem) -> str:
    """Compose(q, d, e): the item's sub-question, what its note says is missing, and the question."""
    return " ".join(part for part in (item.sub_question, item.note, question) if part)


def parse_sub_questions(value: dict[str, Any], max_items: int) -> tuple[list[str], list[str]]:
    """Sub-questions from an initialisation reply; (items, problems)."""
    problems: list[str] = []
    raw = value.get("items")
    if not isinstance(raw, list):
        return [], ['missing "items" list']
    items: list[str] = []
    for i, entry in enumerate(raw):
        text = entry.get("sub_question") if isinstance(entry, dict) else entry
        if isinstance(text, str) and text.strip():
            if text.strip() not in items:
                items.append(text.strip())
        else:
            problems.append(f"items[{i}] has no sub_question")
    if len(items) > max_items:
        problems.append(f"{len(items)} items, kept the first {max_items}")
        items = items[:max_items]
    return items, problems


def _item_id(raw: str) -> str:
    """`R2`, `r2` and a bare `2` all name item R2."""
    text = raw.strip()
    return f"R{text}" if text.isdigit() else text.upper() if text[:1] in "rR" and text[1:].isdigit() else text


def parse_update(value: dict[str, Any]) -> tuple[list[Proposal], list[str], list[str]]:
    """Proposals and new sub-questions from an update reply; (proposals, new_items, problems)."""
    problems: list[str] = []
    proposals: list[Proposal] = []
    raw = value.get("updates", [])
    if not isinstance(raw, list):
        raw, problems = [], ['"updates" is not a list']
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            problems.append(f"updates[{i}] has no id")
            continue
        ids = entry.get("supporting_chunk_ids")
        proposals.append(Proposal(
            item_id=_item_id(entry["id"]),
            status=entry.get("status") if isinstance(entry.get("status"), str) else None,
            note=entry.get("note") if isinstance(entry.get("note"), str) else None,
            supporting_chunk_ids=[str(c) for c in ids] if isinstance(ids, list) else None,
            reason=entry.get("reason") if isinstance(entry.get("reason"), str) else None,
        ))
    new_items = []
    for entry in value.get("new_items") or []:
        text = entry.get("sub_question") if isinstance(entry, dict) else entry
        if isinstance(text, str) and text.strip():
            new_items.append(text.strip())
    return proposals, new_items, problems


def apply_update(previous: Register, proposals: list[Proposal], new_items: list[str], *,
                 known_chunk_ids: set[str], max_items: int | None = None) -> UpdateOutcome:
    """S_t = ApplyInvariants(U(S_{t-1}, ΔC_t), S_{t-1}).

    Invariant 1: an open item leaves the open set only through `retired` with a reason (no other
    removal exists). Invariant 2: supporting evidence is append-only. Violations are undone and listed.
    """
    register = previous.copy()
    violations: list[str] = []
    changes: list[ItemChange] = []
    for p in proposals:
        item = register.items.get(p.item_id)
        if item is None:
            violations.append(f"{p.item_id}: no such item; proposal ignored")
            continue
        before_status, before_note, before_ids = item.status, item.note, list(item.supporting_chunk_ids)
        status = p.status.strip().lower() if p.status else None
        reason = (p.reason or "").strip() or None
        if status is not None and status not in STATUSES:
            violations.append(f"{item.item_id}: status {p.status!r} is not allowed (items leave only "
                              f"through retired with a reason); kept {item.status}")
            status = None
        if status == "retired" and item.status != "retired" and reason is None:
            violations.append(f"{item.item_id}: retired without a reason; kept {item.status}")
            status = None
        if status is not None:
            item.status = status
            if status == "retired":
                item.reason = reason
        if p.note is not None:
            item.note = p.note.strip()
        if p.supporting_chunk_ids is not None:
            proposed = list(dict.fromkeys(c.strip() for c in p.supporting_chunk_ids if c.strip()))
            unknown = [c for c in proposed if c not in known_chunk_ids]
            if unknown:
                violations.append(f"{item.item_id}: unknown or unseen chunk ids dropped: {', '.join(unknown)}")
            dropped = [c for c in before_ids if c not in proposed]
            if proposed and dropped:
                violations.append(f"{item.item_id}: evidence is append-only; kept {', '.join(dropped)}")
            item.supporting_chunk_ids = before_ids + [c for c in proposed
                                                      if c in known_chunk_ids and c not in before_ids]
        added = item.supporting_chunk_ids[len(before_ids):]
        note_changed = item.note != before_note
        if item.status != before_status or note_changed or added:
            changes.append(ItemChange(
                item.item_id, item.sub_question, before_status, item.status, item.note,
                reason if item.status == "retired" else None, list(item.supporting_chunk_ids),
                note_changed, added,
            ))
    for text in new_items:
        if any(i.sub_question.lower() == text.lower() for i in register.items.values()):
            continue
        if max_items is not None and len(register.items) >= max_items:
            violations.append(f"new item {text!r} dropped: the register holds {max_items} items at most")
            continue
        item = RegisterItem(register.next_item_id(), text, "pending")
        register.items[item.item_id] = item
        changes.append(ItemChange(item.item_id, text, None, "pending", "", None, [], False, []))
    _check_invariants(previous, register)
    return UpdateOutcome(register, changes, violations)


def _check_invariants(previous: Register, current: Register) -> None:
    """Req(S_t) ⊇ Req(S_{t-1}) minus retired items, and P_i(t) ⊇ P_i(t-1): a bug here must not pass."""
    for item_id, old in previous.items.items():
        new = current.items.get(item_id)
        if new is None:
            raise AssertionError(f"register invariant broken: {item_id} disappeared")
        if new.status == "retired" and old.status != "retired" and not new.reason:
            raise AssertionError(f"register invariant broken: {item_id} retired without a reason")
        if new.supporting_chunk_ids[:len(old.supporting_chunk_ids)] != old.supporting_chunk_ids:
            raise AssertionError(f"register invariant broken: evidence of {item_id} was overwritten")


def progress_delta(changes: list[ItemChange], register: Register) -> tuple[str, str] | None:
    """(changes text, open items text) for the [Progress] message, or None without material change."""
    material = [c for c in changes if c.material]
    if not material:
        return None
    parts = []
    for c in material:
        note = c.note if len(c.note) <= _NOTE_PREVIEW else c.note[:_NOTE_PREVIEW - 1] + "…"
        parts.append(f"{c.item_id} {c.to_status}" + (f": {note}" if note else "") + ".")
    still_open = register.open_items()
    open_text = "; ".join(f"{i.item_id} {i.sub_question}" for i in still_open) or "none"
    return " ".join(parts), open_text
