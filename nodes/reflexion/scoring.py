"""Read a model's self-assigned score, whatever shape it comes in."""

from __future__ import annotations

import math
import re
from typing import Any

_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
_NUMBER = r"-?\d+(?:\.\d+)?|" + "|".join(_WORDS)
_SCORE = re.compile(
    rf"^\s*(?:score\s*[:=]?\s*)?({_NUMBER})\s*(?:(/|out\s+of)\s*({_NUMBER})|(%))?\s*(?:points?)?\s*[.!]?\s*$",
    re.IGNORECASE,
)


def _number(text: str) -> float:
    word = text.lower()
    return float(_WORDS.index(word)) if word in _WORDS else float(text)


def parse_score(value: Any, scale: float = 10.0) -> float | None:
    """A score on 0..`scale` from ints, floats and strings such as "8", "8.5", "8/10", "80%", "eight",
    "8 out of 10", "Score: 8".

    Anything else ("high", "", NaN, a value off the scale) is no score: None, never an error.
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:  # an int too large for a float
            return None
    elif isinstance(value, str):
        match = _SCORE.match(value)
        if not match:
            return None
        number = _number(match.group(1))
        if match.group(2):
            denominator = _number(match.group(3))
            if denominator <= 0:
                return None
            number = number / denominator * scale
        elif match.group(4):
            number = number / 100 * scale
    else:
        return None
    if math.isnan(number) or not 0 <= number <= scale:
        return None
    return number
