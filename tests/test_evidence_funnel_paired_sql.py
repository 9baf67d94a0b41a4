"""The paired funnel query lists the stages itself (a .sql file, no template): it must list FUNNEL_STAGES, in order."""
from __future__ import annotations

import re

from warehouse.queries import FUNNEL_PAIRED_SQL, FUNNEL_STAGES


def test_the_paired_funnel_sql_unpivots_exactly_the_funnel_stages_in_order():
    lists = re.findall(r"\bON ([a-z_, ]+) INTO NAME stage", FUNNEL_PAIRED_SQL)
    selects = re.findall(r"SELECT question_id, dataset, scope, hop, ([a-z_, ]+) FROM", FUNNEL_PAIRED_SQL)
    assert len(lists) == 2 and len(selects) == 2
    for found in lists + selects:
        assert tuple(s.strip() for s in found.split(",")) == FUNNEL_STAGES
