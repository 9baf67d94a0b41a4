"""The fictional world behind the demo set: towns, rivers, people and companies, drawn from a seed."""
from __future__ import annotations

import random
from dataclasses import dataclass, field

FEMALE_NAMES = [
    "Adela", "Cosima", "Elsbeth", "Greta", "Isolde", "Katrin", "Marit", "Odile", "Quilla", "Rosamund",
    "Sigrun", "Ulla", "Wilhelmina", "Ysolde", "Brielle", "Delphine", "Fiora", "Hester", "Juno", "Liesel",
    "Noor", "Perpetua", "Saskia", "Undine", "Wendeline", "Zelda", "Maelis", "Tamsin",
]
MALE_NAMES = [
    "Bram", "Dorian", "Fenwick", "Halvard", "Jasper", "Leopold", "Nils", "Piet", "Tobias", "Viggo",
    "Zeno", "Anselm", "Caspar", "Emrys", "Gideon", "Ivo", "Kasimir", "Mattias", "Orrin", "Rafferty",
    "Thaddeus", "Valko", "Yorick", "Lucan", "Bertil", "Osric", "Corwin", "Aurel",
]
SURNAME_HEADS = ["Brenn", "Corv", "Dall", "Fenn", "Gorr", "Hask", "Jarr", "Kell", "Lorr", "Marr", "Nesh",
                 "Pell", "Quen", "Rusk", "Sall", "Tarr", "Vesk", "Wend", "Yarr", "Orm", "Halb", "Trev"]
SURNAME_TAILS = ["ick", "ow", "en", "ard", "ley", "ing", "ett", "by", "ston", "well", "mere", "ant"]
COMPANY_HEADS = ["Arl", "Bex", "Cor", "Dra", "Esk", "Fal", "Gly", "Hol", "Ives", "Jess", "Kor", "Lum", "Nor", "Pry"]
COMPANY_TAILS = ["vel", "tane", "dris", "mont", "wyn", "cari", "bourne", "lith"]
TOWN_HEADS = ["Kess", "Harrow", "Wyn", "Dunmar", "Oster", "Bel", "Cald", "Fara", "Grim", "Lind", "Mor",
              "Pendle", "Rav", "Sten", "Thorn", "Vell", "Ald", "Brack", "Carr", "Elder", "Quill", "Saxel"]
TOWN_TAILS = ["ford", "mere", "holt", "wick", "by", "stead", "haven", "bridge", "moor", "field"]
RIVERS = ["Salk", "Ostrel", "Vennet", "Mirrow", "Tiskel", "Lunne", "Carran", "Brisa", "Ebbet", "Quarl",
          "Dunnow", "Hessel", "Arvel", "Sorrin"]
MOUNTAINS = ["Mount Caddow", "the Harl Crags", "Brennan Pike", "the Seven Tors", "Mount Elsin", "Gallow Fell"]
REGIONS = ["the Ostmark Vale", "the Northern Fells", "the Salt Coast", "the Lowmeadows", "the Grey Uplands"]
INDUSTRIES = [
    ("Instruments", "surveying instruments"), ("Looms", "power looms"), ("Ceramics", "glazed tableware"),
    ("Shipwrights", "river barges"), ("Optics", "lenses and field glasses"), ("Brewing", "dark ales"),
    ("Cartography", "county maps"), ("Clockworks", "tower clocks"), ("Glassworks", "pressed glass"),
    ("Press", "almanacs and newspapers"), ("Telegraph", "telegraph keys"), ("Foundry", "cast-iron bridges"),
]
PROFESSIONS = ["engineer", "painter", "botanist", "cartographer", "architect", "violinist", "surveyor",
               "chemist", "novelist", "photographer", "glassblower", "printer"]


@dataclass
class Town:
    """A town: founding year, river, region, a canal to another river (a decoy) and a neighbour."""

    name: str
    founded: int
    river: str
    region: str
    canal_river: str
    neighbour: str = ""
    feature: str = ""


@dataclass
class River:
    """A river with its source and length."""

    name: str
    source: str
    length_km: int
    mouth: str


@dataclass
class Person:
    """A person; raised_in differs from birthplace on purpose (a decoy bridge)."""

    name: str
    female: bool
    born: int
    birthplace: str
    raised_in: str
    profession: str
    mother: str | None = None
    employer: str | None = None
    founded: str | None = None


@dataclass
class Company:
    """A company with its founder, founding year, headquarters and a director (a decoy founder)."""

    name: str
    short: str
    product: str
    founded: int
    founder: str
    hq: str
    director: str = ""


@dataclass
class World:
    """Every entity of the demo world, by name."""

    towns: dict[str, Town] = field(default_factory=dict)
    rivers: dict[str, River] = field(default_factory=dict)
    people: dict[str, Person] = field(default_factory=dict)
    companies: dict[str, Company] = field(default_factory=dict)
    namesakes: dict[str, str] = field(default_factory=dict)  # entity -> its near-namesake


def near_namesake(name: str) -> str:
    """A one-letter variant of a name (Brennick -> Brannick), the kind a careless reader confuses."""
    swaps = {"e": "a", "a": "e", "o": "u", "u": "o", "i": "y", "y": "i"}
    for i in range(1, len(name)):
        if name[i] in swaps:
            return name[:i] + swaps[name[i]] + name[i + 1:]
    return name + "e"


class _Unique:
    """Draws values without repeats, so every comparison in the world has a strict answer."""

    def __init__(self, rng: random.Random, low: int, high: int):
        self.rng, self.low, self.high = rng, low, high
        self.used: set[int] = set()

    def near(self, target: int) -> int:
        for delta in range(self.high - self.low + 1):
            for value in (target + delta, target - delta):
                if self.low <= value <= self.high and value not in self.used:
                    self.used.add(value)
                    return value
        raise ValueError("no unused value left")

    def draw(self) -> int:
        return self.near(self.rng.randint(self.low, self.high))


def _names(rng: random.Random, heads: list[str], tails: list[str], n: int) -> list[str]:
    # Skip joins that triple a letter (Kell + ley) or read badly (Kess + stead).
    pool = sorted({h + t for h in heads for t in tails if h[-1] != t[0]})
    rng.shuffle(pool)
    return pool[:n]


def build_world(seed: int = 20240611) -> World:
    """The whole world, deterministic for a seed."""
    rng = random.Random(seed)
    world = World()
    years_town, years_person, years_company = _Unique(rng, 1120, 1880), _Unique(rng, 1800, 1965), _Unique(
        rng, 1840, 1995)

    river_names = list(RIVERS)
    town_names = _names(rng, TOWN_HEADS, TOWN_TAILS, 40)
    for i, river in enumerate(river_names):
        mouth = town_names[i % len(town_names)]
        world.rivers[river] = River(f"River {river}", rng.choice(MOUNTAINS), rng.randint(38, 420), mouth)
    features = ["covered wool market", "leaning clock tower", "stone toll bridge", "salt warehouses",
                "walled physic garden", "lantern festival", "cooperage quarter", "tidal mill"]
    for name in town_names:
        river, canal = rng.sample(river_names, 2)
        world.towns[name] = Town(name, years_town.draw(), f"River {river}", rng.choice(REGIONS),
                                 f"River {canal}", feature=rng.choice(features))
    names = list(world.towns)
    for i, name in enumerate(names):
        world.towns[name].neighbour = names[(i + 7) % len(names)]

    surnames = _names(rng, SURNAME_HEADS, SURNAME_TAILS, 120)
    females, males = list(FEMALE_NAMES), list(MALE_NAMES)

    def new_person(female: bool, born: int | None = None, surname: str | None = None) -> Person:
        first = rng.choice(females if female else males)
        last = surname or surnames.pop()
        full = f"{first} {last}"
        while full in world.people:
            full = f"{rng.choice(females if female else males)} {last}"
        birthplace, raised = rng.sample(names, 2)
        person = Person(full, female, years_person.near(born) if born else years_person.draw(), birthplace, raised,
                        rng.choice(PROFESSIONS))
        world.people[full] = person
        return person

    industries = list(INDUSTRIES)
    # Company names never contain the founder's name, so a snippet cannot give the founder away.
    company_shorts = _names(rng, COMPANY_HEADS, COMPANY_TAILS, 24)
    for i in range(24):
        founder = new_person(rng.random() < 0.4, born=rng.randint(1815, 1935))
        industry, product = industries[i % len(industries)]
        short = company_shorts[i]
        company = Company(f"{short} {industry}", short, product,
                          years_company.near(founder.born + rng.randint(24, 44)), founder.name, rng.choice(names))
        founder.founded = company.name
        world.companies[company.name] = company

    companies = list(world.companies)
    for _ in range(34):  # employees; some with a mother who has her own page
        person = new_person(rng.random() < 0.5)
        person.employer = rng.choice(companies)
        if rng.random() < 0.6:
            mother = new_person(True, born=person.born - rng.randint(20, 38))
            person.mother = mother.name
    founders = [c.founder for c in world.companies.values()]
    for company in world.companies.values():
        staff = [p.name for p in world.people.values() if p.employer == company.name]
        company.director = staff[0] if staff else rng.choice([f for f in founders if f != company.founder])

    _add_namesakes(world, rng, years_person, years_company)
    return world


def _add_namesakes(world: World, rng: random.Random, years_person: _Unique, years_company: _Unique) -> None:
    names = list(world.towns)
    for person in [p for p in world.people.values() if p.founded or p.employer][:30]:
        first, last = person.name.split(" ", 1)
        twin_name = f"{first} {near_namesake(last)}"
        if twin_name in world.people:
            continue
        birthplace, raised = rng.sample([n for n in names if n != person.birthplace], 2)
        twin = Person(twin_name, person.female, years_person.near(person.born + rng.choice([-9, -5, 6, 11])),
                      birthplace, raised, rng.choice([p for p in PROFESSIONS if p != person.profession]))
        world.people[twin_name] = twin
        world.namesakes[person.name] = twin_name
    for company in list(world.companies.values())[:10]:
        industry = company.name.split(" ", 1)[1]
        twin_name = f"{near_namesake(company.short)} {industry}"
        if twin_name in world.companies:
            continue
        founder = world.people[world.namesakes.get(company.founder, company.founder)]
        twin_company = Company(twin_name, near_namesake(company.short), company.product,
                               years_company.near(company.founded + rng.choice([-7, 4, 9])), founder.name,
                               rng.choice([n for n in names if n != company.hq]), director=company.director)
        world.companies[twin_name] = twin_company
        world.namesakes[company.name] = twin_name
        if founder.founded is None:
            founder.founded = twin_name
    for town in list(world.towns.values())[:10]:
        twin_name = near_namesake(town.name)
        if twin_name in world.towns:
            continue
        river = rng.choice([r for r in world.rivers.values() if r.name != town.river]).name
        world.towns[twin_name] = Town(twin_name, town.founded + rng.choice([-40, 25, 60]), river,
                                      rng.choice([r for r in REGIONS if r != town.region]), town.river,
                                      neighbour=town.name, feature=town.feature)
        world.namesakes[town.name] = twin_name
