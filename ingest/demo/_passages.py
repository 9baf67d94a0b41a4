"""Passage text for every entity: a long opener full of decoys, the answer-bearing facts later on."""
from __future__ import annotations

import random
from dataclasses import dataclass

from ._world import Company, Person, River, Town, World

WORKS = {
    "engineer": "pumping engines", "painter": "river landscapes", "botanist": "studies of upland mosses",
    "cartographer": "parish maps", "architect": "brick chapels", "violinist": "recitals",
    "surveyor": "boundary surveys", "chemist": "dye experiments", "novelist": "serialised novels",
    "photographer": "glass-plate portraits", "glassblower": "lamp chimneys", "printer": "broadsheets",
}


@dataclass(frozen=True)
class Passage:
    """One corpus passage: a unique title and its text."""

    title: str
    text: str


def _a(word: str) -> str:
    return f"an {word}" if word[0] in "aeiou" else f"a {word}"


def _they(person: Person) -> tuple[str, str]:
    return ("She", "her") if person.female else ("He", "his")


def person_passage(world: World, person: Person, rng: random.Random) -> Passage:
    """Biography: opener about work and the town of upbringing; birth, mother and employer later."""
    she, her = _they(person)
    raised = world.towns[person.raised_in]
    worked_in = world.towns[raised.neighbour].name
    short = person.name.split()[-1]
    opener = (
        f"{person.name} was {_a(person.profession)} whose {WORKS[person.profession]} drew admirers well beyond "
        f"{raised.name}, the town in {raised.region} where {she.lower()} was raised by an aunt after a long "
        f"childhood illness. {she} spent several working years in {worked_in} as well, and letters from that "
        f"period describe long walks beside the canal to the {raised.canal_river}."
    )
    facts = [f"Parish records of {person.birthplace} show that {short} was in fact born there in {person.born}"
             + (f", the eldest child of {person.mother}." if person.mother else ".")]
    if person.employer:
        facts.append(f"For most of {her} career {short} worked for {person.employer}, "
                     f"{rng.choice(['keeping its ledgers', 'running its drawing office', 'training apprentices'])}.")
    if person.founded:
        facts.append(f"{she} is best remembered as the founder of {person.founded}, "
                     f"a venture {she.lower()} started with borrowed money.")
    facts.append(f"{short} is buried in the churchyard at {world.towns[person.raised_in].neighbour}.")
    return Passage(person.name, opener + " " + " ".join(facts))


def company_passage(world: World, company: Company, rng: random.Random) -> Passage:
    """Company history: opener names its long-serving director; founding year, founder and seat later."""
    director = world.people[company.director]
    customer = world.towns[world.towns[company.hq].neighbour].name
    opener = (
        f"{company.name} is a maker of {company.product} whose name became a byword for reliability; under its "
        f"long-serving director {director.name}, the firm shipped its wares to customers as far away as "
        f"{customer} and won medals at several regional trade exhibitions."
    )
    facts = (
        f"The company was established in {company.founded} by {company.founder}, who had trained as "
        f"{_a(world.people[company.founder].profession)}. Its head office stands in {company.hq}, in a former "
        f"{rng.choice(['grain store', 'coaching inn', 'rope works'])} near the market square."
    )
    return Passage(company.name, opener + " " + facts)


def town_passage(world: World, town: Town, rng: random.Random) -> Passage:
    """Town: opener with its canal to another river; founding year and its own river later."""
    opener = (
        f"{town.name} is a market town in {town.region}, known for its {town.feature} and for the canal that "
        f"links its wharves to the {town.canal_river}, which still carries timber and slate downstream to "
        f"{town.neighbour}. Its weekly market draws traders from across the district."
    )
    facts = (
        f"The town was founded in {town.founded} around a {rng.choice(['ford', 'priory', 'crossroads inn'])}. "
        f"The {town.river} flows through the town centre, and the old {town.feature} stands on its east bank."
    )
    return Passage(town.name, opener + " " + facts)


def river_passage(world: World, river: River, rng: random.Random) -> Passage:
    """River: opener about mills and towns that use its water; source and length later."""
    canal_towns = sorted(t.name for t in world.towns.values() if t.canal_river == river.name)
    by_canal = canal_towns[0] if canal_towns else river.mouth
    opener = (
        f"The {river.name} is prized by anglers for its brown trout, and a string of water mills along its "
        f"banks once ground grain for the surrounding farms; a canal branch even reaches {by_canal}, whose "
        f"wharves still handle barge traffic from the upper valley."
    )
    facts = (
        f"It rises on {river.source} and runs for {river.length_km} km before reaching the sea below "
        f"{river.mouth}."
    )
    return Passage(river.name, opener + " " + facts)


def festival_passage(world: World, town: Town, rng: random.Random) -> Passage:
    """A passage that names a town and its people but none of the facts a question asks for."""
    locals_ = sorted(p.name for p in world.people.values() if p.raised_in == town.name)
    guest = locals_[0] if locals_ else sorted(world.people)[0]
    event = rng.choice(["Lantern Fair", "Barge Regatta", "Wool Week", "Harvest Assize"])
    text = (
        f"The {town.name} {event} is held every autumn along the quays of the canal to the {town.canal_river}. "
        f"Stalls from {town.neighbour} and the villages of {town.region} line the streets, and in recent years "
        f"the opening address has often been given by {guest}, who grew up in the town. The fair ends with a "
        f"procession of decorated barges and a supper in the old {town.feature}."
    )
    return Passage(f"{town.name} {event}", text)
