"""A deterministic, procedurally generated training corpus (original text, no copyright).

The generator writes a small "harbour almanac": short paragraphs of simple English
sentences assembled from fixed word lists with a seeded ``random.Random``. The same
seed always yields the same text (Python's ``Random`` is stable across versions for
``choice``/``randrange`` with an integer seed), so training runs are reproducible.

    python3 corpus.py            # print the corpus (about 32 KB)
"""
import random

DEFAULT_SEED = 1234
DEFAULT_SIZE_BYTES = 32 * 1024

_NAMES = ["Ada", "Brin", "Cato", "Dalia", "Esko", "Fenna", "Gus", "Hale", "Ines", "Joss"]
_CREATURES = ["heron", "otter", "gull", "crab", "seal", "tern", "eel", "cormorant"]
_PLACES = ["the quay", "the lighthouse", "the salt marsh", "the old pier", "the dunes",
           "the net loft", "the tide pools", "the ferry slip", "the boat yard"]
_WEATHER = ["grey", "bright", "windy", "still", "misty", "cold", "warm", "stormy"]
_VERBS = ["mends", "counts", "paints", "watches", "carries", "sorts", "repairs", "lights"]
_OBJECTS = ["the nets", "a lantern", "the buoys", "a rope", "the oars", "a kettle",
            "the sails", "a ledger", "the shutters", "a crate of apples"]
_TIMES = ["at dawn", "before noon", "after the bell", "at low tide", "at dusk", "by lamplight"]
_ADVERBS = ["slowly", "carefully", "quietly", "gladly", "twice", "once more"]
_MONTHS = ["Frostmonth", "Thawmonth", "Seedmonth", "Sunmonth", "Harvestmonth", "Fogmonth"]


def _article(noun: str) -> str:
    return ("An " if noun[0] in "aeiou" else "A ") + noun


def _sentence(rng: random.Random) -> str:
    kind = rng.randrange(6)
    name, other = rng.sample(_NAMES, 2)
    if kind == 0:
        return f"{name} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)} {rng.choice(_TIMES)}."
    if kind == 1:
        return f"The {rng.choice(_WEATHER)} wind comes in over {rng.choice(_PLACES)}."
    if kind == 2:
        count = rng.randrange(2, 13)
        return f"{other} sees {count} {rng.choice(_CREATURES)}s near {rng.choice(_PLACES)}."
    if kind == 3:
        return (f"{name} and {other} {rng.choice(_ADVERBS)} walk to "
                f"{rng.choice(_PLACES)} {rng.choice(_TIMES)}.")
    if kind == 4:
        creature = _article(rng.choice(_CREATURES))
        return f"{creature} waits by {rng.choice(_PLACES)}, and {name} smiles."
    return f"\"Is it {rng.choice(_WEATHER)} today?\" asks {name}. \"It is,\" says {other}."


def _paragraph(rng: random.Random, day: int) -> str:
    month = _MONTHS[(day // 30) % len(_MONTHS)]
    header = f"Day {day % 30 + 1} of {month}."
    body = " ".join(_sentence(rng) for _ in range(rng.randrange(3, 7)))
    return f"{header} {body}\n"


def generate(seed: int = DEFAULT_SEED, size_bytes: int = DEFAULT_SIZE_BYTES) -> str:
    """Return at least ``size_bytes`` characters of text, identical for identical args."""
    rng = random.Random(seed)
    parts, total, day = [], 0, 0
    while total < size_bytes:
        paragraph = _paragraph(rng, day)
        parts.append(paragraph)
        total += len(paragraph)
        day += 1
    return "".join(parts)


if __name__ == "__main__":
    print(generate(), end="")
