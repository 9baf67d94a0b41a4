"""The warehouse's corpus as titles: what an import matches passages known only by title against."""
from __future__ import annotations

from pathlib import Path

from trajscope.format import Chunk, RecordError
from trajscope.warehouse._connection import WarehouseMissing
from trajscope.warehouse.read import LimitExceeded, open_read, profile_limits

from ._sql import query_sql

# Titled chunks, text left out (matching is by unique title; a corpus's text may be gigabytes).
CORPUS_TITLES_SQL = query_sql("corpus_titles")


def corpus_titles(db_path: str | Path) -> list[Chunk]:
    """The titled chunks of the warehouse at db_path, with empty text; [] when there is no warehouse there."""
    if not Path(db_path).exists():
        return []
    try:
        # A corpus has many more rows than a page shows: the byte cap, not the row count, bounds the read.
        with open_read(db_path, limits=profile_limits("command").with_overrides(max_rows=50_000_000)) as reader:
            rows = reader.execute(CORPUS_TITLES_SQL).fetchall()
    except WarehouseMissing:
        return []
    except LimitExceeded as exc:  # (a file that is no warehouse is refused as the load would refuse it)
        raise RecordError(str(db_path), 0, "corpus", f"cannot read the warehouse's corpus titles ({exc}); "
                          "name the corpus with --corpus NAME|FILE") from None
    return [Chunk(chunk_id=chunk_id, text="", dataset=dataset, title=title) for dataset, chunk_id, title in rows]
