"""Multi-hop questions over the demo world, each with its gold chain, aliases and a distractor context."""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from ._passages import Passage
from ._world import World

SNIPPET_CHARS = 200


@dataclass
class DemoQuestion:
    """A question with its gold passage titles in reasoning order and its distractor titles."""

    kind: str
    question_type: str
    text: str
    answer: str
    aliases: list[str]
    gold_titles: list[str]
    mention: Passage
    distractor_titles: list[str] = field(default_factory=list)


def river_aliases(river: str) -> list[str]:
    """`River Salk` is also `Salk` and `the Salk`."""
    bare = river.removeprefix("River ")
    return [bare, f"the {bare}"]


class QuestionMaker:
    """Draws questions of each template, never reusing a subject, and rejects ones a snippet would answer."""

    def __init__(self, world: World, passages: dict[str, Passage], rng: random.Random):
        self.world, self.passages, self.rng = world, passages, rng
        self.used: set[str] = set()
        self.questions: list[DemoQuestion] = []
        self._mention_no = 0

    # --- helpers -------------------------------------------------------------------------------
    def _fresh(self, pool: list[str]) -> list[str]:
        # Entities with a near-namesake first: those are the questions a careless agent gets wrong.
        fresh = [x for x in pool if x not in self.used]
        self.rng.shuffle(fresh)
        return sorted(fresh, key=lambda x: x not in self.world.namesakes)

    def _leaks(self, answer: str, aliases: list[str], titles: list[str]) -> bool:
        heads = [self.passages[t].text[:SNIPPET_CHARS] for t in titles]
        return any(a in h for a in [answer, *aliases] for h in heads)

    def _mention(self, names: list[str], answer: str, aliases: list[str]) -> Passage:
        self._mention_no += 1
        w = self.world
        town = self.rng.choice(sorted(w.towns))
        year = 1890 + self._mention_no * 2
        decoy = self.rng.choice(sorted(w.rivers.values(), key=lambda r: r.name)).name
        listed = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]
        text = (
            f"A {year} column in the {town} Courier, reprinted in several almanacs, described a crowded evening "
            f"at which {listed} were all discussed at length by the district's historical society. The writer "
            f"complained that the speakers confused half their sources, mixed up families with similar "
            f"names, and spent more time on the barge traffic of the {decoy} than on anything recorded in "
            f"the parish books. No minutes of the meeting survive."
        )
        if any(a and a in text for a in [answer, *aliases]):
            text = text.replace(f"of the {decoy}", "of the district")
        return Passage(f"{town} Courier column of {year}", text)

    def _add(self, kind: str, qtype: str, text: str, answer: str, aliases: list[str], golds: list[str],
             named: list[str], subjects: list[str], check_snippets: bool = True) -> bool:
        if check_snippets and self._leaks(answer, aliases, golds):
            return False
        mention = self._mention(named, answer, aliases)
        self.questions.append(DemoQuestion(kind, qtype, text, answer, aliases, golds, mention))
        self.used.update(subjects)
        return True

    def _take(self, n: int, pool: list[str], make: Callable[[str], bool]) -> None:
        made = 0
        for subject in self._fresh(pool):
            if made == n:
                return
            made += make(subject)
        if made < n:
            raise ValueError(f"only {made} of {n} questions could be made from this pool")

    # --- templates -----------------------------------------------------------------------------
    def build(self) -> list[DemoQuestion]:
        """All 60 questions."""
        w = self.world
        founders = [c.founder for c in w.companies.values() if c.name not in w.namesakes.values()]
        employees = [p.name for p in w.people.values() if p.employer]
        with_mother = [p.name for p in w.people.values() if p.mother]
        companies = [c for c in w.companies if c not in w.namesakes.values()]
        towns = [t for t in w.towns if t not in w.namesakes.values()]
        people = [p for p in w.people if p not in w.namesakes.values()]

        def company_year(founder: str) -> bool:
            c = w.companies[w.people[founder].founded]  # type: ignore[index]
            return self._add("company_year", "bridge", f"In which year was the company founded by {founder} "
                             "established?", str(c.founded), [], [founder, c.name], [founder], [founder])

        def birth_river(name: str) -> bool:
            t = w.towns[w.people[name].birthplace]
            return self._add("birth_river", "bridge", f"Which river flows through the town where {name} was born?",
                             t.river, river_aliases(t.river), [name, t.name], [name], [name])

        def employer_founder(name: str) -> bool:
            c = w.companies[w.people[name].employer]  # type: ignore[index]
            return self._add("employer_founder", "bridge", f"Who founded the company that {name} worked for?",
                             c.founder, [c.founder.split()[-1]], [name, c.name], [name], [name])

        def mother_year(name: str) -> bool:
            m = w.people[w.people[name].mother]  # type: ignore[index]
            return self._add("mother_year", "bridge", f"In which year was the mother of {name} born?",
                             str(m.born), [], [name, m.name], [name], [name])

        self._take(5, founders, company_year)
        self._take(5, people, birth_river)
        self._take(4, employees, employer_founder)
        self._take(2, with_mother, mother_year)

        def pair(pool: list[str]) -> Callable[[str], bool]:
            def make(a: str) -> bool:
                others = [b for b in self._fresh(pool) if b != a]
                return bool(others) and compare(a, others[0])
            return make

        compare: Callable[[str, str], bool]

        def towns_earlier(a: str, b: str) -> bool:
            ta, tb = w.towns[a], w.towns[b]
            win = a if ta.founded < tb.founded else b
            return self._add("town_earlier", "comparison", f"Which town was founded earlier, {a} or {b}?",
                             win, [], [a, b], [a, b], [a, b], check_snippets=False)

        def born_first(a: str, b: str) -> bool:
            win = a if w.people[a].born < w.people[b].born else b
            return self._add("born_first", "comparison", f"Who was born first, {a} or {b}?", win,
                             [win.split()[-1]], [a, b], [a, b], [a, b], check_snippets=False)

        def company_later(a: str, b: str) -> bool:
            win = a if w.companies[a].founded > w.companies[b].founded else b
            return self._add("company_later", "comparison", f"Which company was established later, {a} or {b}?",
                             win, [w.companies[win].short], [a, b], [a, b], [a, b], check_snippets=False)

        for n, pool, fn in ((4, towns, towns_earlier), (3, people, born_first), (3, companies, company_later)):
            compare = fn
            self._take(n, pool, pair(pool))

        def founder_river(company: str) -> bool:
            f = w.people[w.companies[company].founder]
            t = w.towns[f.birthplace]
            return self._add("founder_river", "bridge", "Which river flows through the birthplace of the founder "
                             f"of {company}?", t.river, river_aliases(t.river), [company, f.name, t.name],
                             [company], [company])

        def mother_town_year(name: str) -> bool:
            m = w.people[w.people[name].mother]  # type: ignore[index]
            t = w.towns[m.birthplace]
            return self._add("mother_town_year", "bridge", f"In which year was the birthplace of {name}'s mother "
                             "founded?", str(t.founded), [], [name, m.name, t.name], [name], [name, m.name])

        def river_length(name: str) -> bool:
            t = w.towns[w.people[name].birthplace]
            r = next(r for r in w.rivers.values() if r.name == t.river)
            return self._add("river_length", "bridge", "How long is the river that flows through the birthplace "
                             f"of {name}?", f"{r.length_km} km", [f"{r.length_km} kilometres"],
                             [name, t.name, r.name], [name], [name])

        def employer_seat_year(name: str) -> bool:
            c = w.companies[w.people[name].employer]  # type: ignore[index]
            t = w.towns[c.hq]
            return self._add("employer_seat_year", "bridge", "In which year was the town founded where the "
                             f"company that employed {name} has its head office?", str(t.founded), [],
                             [name, c.name, t.name], [name], [name])

        self._take(5, companies, founder_river)
        self._take(3, with_mother, mother_town_year)
        self._take(3, people, river_length)
        self._take(3, employees, employer_seat_year)

        def birthplace_vs_town(name: str) -> bool:
            tp = w.people[name].birthplace
            others = [t for t in self._fresh(towns) if t != tp]
            tb = others[0]
            win = tp if w.towns[tp].founded < w.towns[tb].founded else tb
            return self._add("birthplace_vs_town", "comparison", f"Which was founded earlier, the birthplace of "
                             f"{name} or {tb}?", win, [], [name, tp, tb], [name, tb], [name, tb], check_snippets=False)

        self._take(6, people, birthplace_vs_town)

        def employer_founder_river(name: str) -> bool:
            c = w.companies[w.people[name].employer]  # type: ignore[index]
            f = w.people[c.founder]
            t = w.towns[f.birthplace]
            return self._add("employer_founder_river", "bridge", "Which river flows through the birthplace of the "
                             f"founder of the company that {name} worked for?", t.river, river_aliases(t.river),
                             [name, c.name, f.name, t.name], [name], [name])

        def founder_river_length(company: str) -> bool:
            f = w.people[w.companies[company].founder]
            t = w.towns[f.birthplace]
            r = next(r for r in w.rivers.values() if r.name == t.river)
            return self._add("founder_river_length", "bridge", "How long is the river that flows through the "
                             f"birthplace of the founder of {company}?", f"{r.length_km} km",
                             [f"{r.length_km} kilometres"], [company, f.name, t.name, r.name], [company], [company])

        self._take(5, employees, employer_founder_river)
        self._take(3, companies, founder_river_length)

        def founders_born(a: str, b: str) -> bool:
            fa, fb = w.companies[a].founder, w.companies[b].founder
            win = a if w.people[fa].born < w.people[fb].born else b
            return self._add("founders_born", "comparison", f"Whose founder was born earlier, {a} or {b}?", win,
                             [w.companies[win].short], [a, fa, b, fb], [a, b], [a, b], check_snippets=False)

        def birthplaces_first(a: str, b: str) -> bool:
            ta, tb = w.people[a].birthplace, w.people[b].birthplace
            if ta == tb:
                return False
            win = ta if w.towns[ta].founded < w.towns[tb].founded else tb
            return self._add("birthplaces_first", "comparison", f"Which was founded first, the birthplace of {a} "
                             f"or the birthplace of {b}?", win, [], [a, ta, b, tb], [a, b], [a, b],
                             check_snippets=False)

        for n, pool, fn in ((3, companies, founders_born), (3, people, birthplaces_first)):
            compare = fn
            self._take(n, pool, pair(pool))
        return self.questions
