"""The typed queries' SQL: trajscope/analysis/queries/<name>.sql, each with a one-line comment and $params."""
from __future__ import annotations

import functools
from importlib import resources


@functools.cache
def query_sql(name: str) -> str:
    """The text of trajscope/analysis/queries/<name>.sql."""
    return (resources.files("trajscope.analysis.queries") / f"{name}.sql").read_text()
