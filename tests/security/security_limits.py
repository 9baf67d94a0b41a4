"""The limits the security tests run under, and the warehouse fingerprint they compare."""
from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb

from trajscope.warehouse import ReadLimits

# Small limits keep the suite fast; each is a bound the tests assert.
SMALL = ReadLimits(timeout_s=2.0, max_rows=50, max_result_mb=2.0, memory_limit_mb=256, max_temp_mb=32,
                   threads=1, lock_wait_s=5.0)
CLI_LIMITS = ["--timeout", "2", "--max-rows", "50", "--max-result-mb", "2", "--memory-limit-mb", "256",
              "--max-temp-mb", "32", "--threads", "1"]
# The time attacks only need some limit to pass: a shorter one stops them in a quarter of the time
# (five read paths each wait it out), and every other attack keeps the 2 s that a loaded machine needs.
TIME_ATTACK_TIMEOUT_S = 0.5


def limits_for(family: str) -> tuple[ReadLimits, list[str]]:
    """The limits (as ReadLimits and as CLI flags) an attack of this family runs under."""
    if family != "time":
        return SMALL, CLI_LIMITS
    flags = list(CLI_LIMITS)
    flags[flags.index("--timeout") + 1] = str(TIME_ATTACK_TIMEOUT_S)
    return SMALL.with_overrides(timeout_s=TIME_ATTACK_TIMEOUT_S), flags


def file_hash(db: Path) -> str:
    """sha256 of the warehouse file."""
    return hashlib.sha256(db.read_bytes()).hexdigest()


def fingerprint(db: Path) -> tuple[str, dict[str, int]]:
    """sha256 of the warehouse file and the row count of every table."""
    digest = file_hash(db)
    with duckdb.connect(str(db), read_only=True) as con:
        tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()]
        counts = {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchall()[0][0] for t in tables}
    return digest, counts
