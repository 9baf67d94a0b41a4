"""The logs a warehouse names as its sources: the only way to rebuild it, so no output may replace one."""
from __future__ import annotations

from importlib import resources
from pathlib import Path

from trajscope.warehouse._connection import WarehouseMissing
from trajscope.warehouse.read import ReadRefused, open_read, profile_limits

SOURCE_LOGS_SQL = (resources.files("trajscope.warehouse.export") / "source_logs.sql").read_text()


def source_logs(db_path: str | Path) -> list[Path]:
    """Every log the warehouse at db_path names as a source_file, as a path (a relative name both from here
    and from the warehouse's folder); [] when there is no readable warehouse there (the command says why)."""
    db = Path(db_path)
    if not db.is_file():
        return []
    try:
        with open_read(db, limits=profile_limits("command").with_overrides(max_rows=50_000_000)) as reader:
            names = [row[0] for row in reader.execute(SOURCE_LOGS_SQL).fetchall()]
    except (WarehouseMissing, ReadRefused):
        return []
    paths = [Path(name) for name in names]
    return paths + [db.parent / p for p in paths if not p.is_absolute()]


__all__ = ["SOURCE_LOGS_SQL", "source_logs"]
