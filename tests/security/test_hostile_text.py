"""Every text helper of trajscope.format is linear in its input: adversarial 10,000-character and
1,000,000-character texts finish in a child process under a generous deadline (a quadratic scan of the
million-character inputs would take hours), and the hand-written option parser agrees with the old
regular expression wherever that one finishes."""
from __future__ import annotations

import random
import re
import subprocess
import sys
import textwrap

from trajscope.format import comparison_options, names_every_option, normalize_answer

# The old definition, kept here as the oracle on short inputs (it backtracks without bound on long ones).
_OLD_OPTIONS = re.compile(r"[,:]\s*([^,:?]+(?:,\s*[^,:?]+)*?)\s+or\s+([^,:?]+?)\s*\?\s*$", re.IGNORECASE)


def _old_comparison_options(question: str) -> list[str]:
    match = _OLD_OPTIONS.search(question)
    if not match:
        return []
    head = [part.strip() for part in re.split(r",\s*", match.group(1))]
    options = [o for o in (normalize_answer(x) for x in [*head, match.group(2).strip()]) if o]
    if len(options) < 2 or any(len(o.split()) > 8 for o in options):
        return []
    return options


def test_the_option_parser_agrees_with_the_old_expression_on_short_questions():
    rng = random.Random(7)
    pieces = ["Stenwick", "b", " ", "  ", ",", ", ", ":", "?", " or ", " OR ", "or", "x y", "\n", "Which is older"]
    named = 0
    for _ in range(40_000):
        question = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 9))) + rng.choice(["?", " ?", ""])
        expected = _old_comparison_options(question)
        assert comparison_options(question) == expected, repr(question)
        named += bool(expected)
    assert named > 500  # the comparison covers questions that name options, not only refusals


def test_known_questions_name_their_options():
    assert comparison_options("Which is older, Stenwick or Kessbridge?") == ["stenwick", "kessbridge"]
    assert comparison_options("Pick one: red, green or blue ?") == ["red", "green", "blue"]
    assert comparison_options("Who wrote it, and when?") == []
    assert names_every_option("Stenwick or Kessbridge", "Which is older, Stenwick or Kessbridge?")


# Each case is (helper call, adversarial text built from n): the shapes that made a backtracking scan
# or a restarted search quadratic (unclosed strings of escaped quotes, long runs before a missing tail).
_CHILD = textwrap.dedent("""
    import sys
    import msgspec
    from trajscope.format import (
        answer_invalidity, comparison_options, contain_match, csv_cell_text, echoes_controller, exact_match,
        exceeds_nesting_limit, mentions_answer, names_every_option, nesting_of, normalize_answer, redact,
        redact_bytes, redact_json_line, redact_value, score_answer, terminal_text, token_f1,
    )
    from trajscope.format._codec import field_of
    from trajscope.format import Trajectory

    n = int(sys.argv[1])
    words = "the a an Stenwick " * (n // 18)
    cases = [
        lambda: comparison_options("Which is older, " + "a " * (n // 2) + "or"),
        lambda: comparison_options(":" + " a," * (n // 3) + " b or c ??"),
        lambda: comparison_options("x, " + "a or " * (n // 5) + "?"),
        lambda: comparison_options("x," + " ," * (n // 2) + "a or"),
        lambda: names_every_option(words, "Which, " + "a, " * (n // 3) + "b or c?"),
        lambda: answer_invalidity(words, "Which, " + "a " * (n // 2) + "or b?", [words]),
        lambda: score_answer(words, words, [words], question="Which, " + "a, " * (n // 3) + "or b?"),
        lambda: normalize_answer("!" * n),
        lambda: exact_match(words, words), lambda: token_f1(words, words, rule="hotpotqa"),
        lambda: contain_match(words, words), lambda: mentions_answer(words, "Stenwick", [words]),
        lambda: echoes_controller(words, [words, "gate " * (n // 5)]),
        lambda: redact('"' + '\\\\"' * (n // 2)), lambda: redact("bearer" + " " * n),
        lambda: redact("\\\\u0041" * (n // 6) + "!"), lambda: redact("sk-" * (n // 3)),
        lambda: redact_json_line(b'{"a": "' + b'\\\\"' * (n // 2)),
        lambda: redact_json_line(b'{"a": "sk-' + b'\\\\"' * (n // 2)),
        lambda: redact_bytes(b'"' + b'\\\\u0041' * (n // 6)),
        lambda: redact_value({"k": ['"' + '\\\\"' * (n // 2)]}),
        lambda: exceeds_nesting_limit("[" * 101 + '"' + '\\\\"' * (n // 2)),
        lambda: exceeds_nesting_limit("[" * n), lambda: nesting_of("[" * n + '"' + '\\\\"' * (n // 2)),
        lambda: terminal_text("\\x1b" * n), lambda: csv_cell_text("=" * n),
    ]
    try:
        msgspec.json.Decoder(Trajectory).decode(b'{"unknown field `' + b"x`at `$" * (n // 7) + b'": 1}')
    except msgspec.ValidationError as error:
        cases.append(lambda caught=error: field_of(caught))
    for case in cases:
        case()
    print("done", len(cases))
""")


def _run_every_helper(n: int) -> str:
    child = subprocess.run([sys.executable, "-c", _CHILD, str(n)], capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr[-2000:]
    return child.stdout


def test_every_text_helper_on_10000_characters():
    assert _run_every_helper(10_000).split() == ["done", "27"]


def test_every_text_helper_on_a_million_characters():
    # 100 times the text: a linear helper costs ~100 times as much (seconds), a quadratic one 10,000 times
    # (the option expression on 2,000 characters took 27 s; the string scans 0.75 s on 16,000)
    assert _run_every_helper(1_000_000).split() == ["done", "27"]
