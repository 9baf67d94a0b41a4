"""Canonical trajscope logs, read through the same importer interface as every other format."""
from __future__ import annotations

from collections.abc import Iterator

from trajscope.format import Trajectory, iter_trajectories, open_input

from ._context import ImportContext
from ._json_stream import check_text


def import_canonical(ctx: ImportContext) -> Iterator[Trajectory]:
    """Every record of a canonical JSONL log, validated strictly (the run ids are the records' own)."""
    with open_input(ctx.path) as fh:
        check_text(ctx.path, fh.read(8192))
    for decoded in iter_trajectories(ctx.path):
        yield decoded.trajectory
