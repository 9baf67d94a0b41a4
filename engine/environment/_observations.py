"""The text the agent sees after each tool call."""
from __future__ import annotations

from collections.abc import Sequence

from trajscope.format import Candidate, Chunk


def search_results(tool: str, query: str, candidates: Sequence[Candidate], titles: dict[str, str | None],
                   read_tool: str) -> str:
    if not candidates:
        return f'{tool} "{query}": no passage matched. Try other words.'
    lines = [f'{tool} "{query}" returned {len(candidates)} chunks:']
    for c in candidates:
        title = titles.get(c.chunk_id)
        head = f"[{c.rank}] {c.chunk_id}" + (f" | {title}" if title else "")
        lines.append(f"{head}\n    {c.snippet or ''}")
    lines.append(f"Snippets are previews, not evidence: call {read_tool} with a chunk id to see the full passage.")
    return "\n".join(lines)


def duplicate_search(tool: str, query: str, first_turn: int, chunk_ids: Sequence[str], read_tool: str) -> str:
    listed = ", ".join(chunk_ids) if chunk_ids else "none"
    return (f'{tool} "{query}" repeats the search of turn {first_turn} (same query after normalisation); '
            f"no new results. Chunks it returned: {listed}. Call {read_tool} on one of them or reformulate "
            "the query.")


def passage(chunk: Chunk) -> str:
    head = f"[{chunk.chunk_id}]" + (f" {chunk.title}" if chunk.title else "")
    return f"{head}\n{chunk.text}"


def reread(chunk_id: str, first_turn: int) -> str:
    return (f"[{chunk_id}] was already read at turn {first_turn}; it is not new evidence "
            "(its text is above, not repeated).")


def unknown_chunk(chunk_id: str) -> str:
    return f'Unknown chunk id "{chunk_id}": no such chunk. Use a chunk id exactly as shown in search results.'


def injected(chunk: Chunk) -> str:
    return f"[Context: top-ranked passage]\n{passage(chunk)}"


def final_recorded(answer: str) -> str:
    return f'Final answer recorded: "{answer}".'
