"""Which stored value a literal in a query unmistakably means, if it is not stored itself.

"sci-fi" where the graph stores "Sci-Fi", or a misspelt name, makes a correct query
return nothing. The schema check (`nodes.graphdb.query_check`) looks each literal a query
compares with a property up (`nodes.graphdb.graph_facts`); one that matches no stored
value is replaced by the stored value it unmistakably means, by the rules here, and the
mapping is recorded so the model (and the result) says so.

Mapping must never invent: a question about a record that does not exist must not
get another record's data. So a literal that matches a stored value ignoring case
maps to that value only; a literal that looks like an identifier (it has a digit,
'@', '/' or ':', or it is an upper-case code) is otherwise never rewritten; a
match ignoring punctuation and spacing maps to that value only; and a fuzzy match
is for free-text names alone, never onto a stored identifier: the same words,
each at most one typo away of the kinds that do not make another name (two
neighbouring letters swapped, a letter dropped or added inside a word of four
letters or more, never a letter replaced or one at either end), and only when
exactly one stored value is that close. So "Keanu Reves" is Keanu Reeves, but
"Joan Cusack" is not John Cusack and "Paul Smith" is not Paula Smith.
"""

from __future__ import annotations

import json
import re
from typing import Any

from reflexion_agents.schemas.query_check import ValueMapping

MAX_DISTINCT_VALUES = 5000
MIN_FUZZY_WORD = 4
MAX_TYPOS = 2
_CODE = re.compile(r"[A-Z][A-Z_-]+")


def _squash(text: str) -> str:
    """The text without case, spaces and punctuation (letters of every script kept)."""
    return re.sub(r"[\W_]+", "", text.casefold())


def looks_like_identifier(text: str) -> bool:
    """An ID, number, code or address ('10248', 'A-12', 'LARSA', 'bob@acme.com'): a near miss is
    another record, not a typo."""
    return any(ch.isdigit() or ch in "@/:" for ch in text) or bool(_CODE.fullmatch(text.strip()))


def one_typo(word: str, target: str) -> bool:
    """`word` is `target` with one typo of the kinds that do not make another name: two neighbouring
    letters swapped, or a letter dropped or added inside the word. Never a letter replaced (Joan,
    John), and never at either end (Paul, Paula; Hank, Hanks)."""
    if len(word) == len(target):
        diffs = [i for i, (a, b) in enumerate(zip(word, target, strict=True)) if a != b]
        return (
            len(diffs) == 2
            and diffs[1] == diffs[0] + 1
            and diffs[0] > 0
            and word[diffs[0]] == target[diffs[1]]
            and word[diffs[1]] == target[diffs[0]]
        )
    short, long = sorted((word, target), key=len)
    if len(long) - len(short) != 1:
        return False
    return any(long[:i] + long[i + 1 :] == short for i in range(1, len(long) - 1))


def name_typos(given: str, stored: str) -> int | None:
    """How many typos turn the name `given` into `stored`, word by word; None if they are not the
    same name (another word count, a short word changed, a change `one_typo` does not allow)."""
    words, targets = given.casefold().split(), stored.casefold().split()
    if len(words) != len(targets):
        return None
    total = 0
    for word, target in zip(words, targets, strict=True):
        if word == target:
            continue
        if min(len(word), len(target)) < MIN_FUZZY_WORD or not one_typo(word, target):
            return None
        total += 1
    return total if total <= MAX_TYPOS else None


def _unique(values: list[str]) -> str | None:
    return values[0] if len(set(values)) == 1 else None


def closest_value(given: str, stored: list[str]) -> str | None:
    """The stored value `given` unmistakably means, or None (see the module's rules)."""
    same = [value for value in stored if value.casefold() == given.casefold()]
    if same:
        return _unique(same)
    if looks_like_identifier(given):
        return None
    squashed = _squash(given)
    same = [value for value in stored if squashed and _squash(value) == squashed and not looks_like_identifier(value)]
    if same:
        return _unique(same)
    scored = [
        (d, value)
        for value in stored
        if not looks_like_identifier(value) and (d := name_typos(given, value)) is not None
    ]
    if not scored:
        return None
    best = min(d for d, _ in scored)
    return _unique([value for d, value in scored if d == best])


def describe_mappings(mappings: list[ValueMapping]) -> str:
    def shown(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False)

    return "; ".join(f"{m.label}.{m.property}: {shown(m.given)} -> {shown(m.mapped)}" for m in mappings)
