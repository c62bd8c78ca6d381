"""Read a model's self-assigned score, whatever shape it comes in."""

from __future__ import annotations

import math
import re
from typing import Any

_SCORE = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(?:(/)\s*(\d+(?:\.\d+)?)|(%))?\s*(?:points?)?\s*$", re.IGNORECASE)


def parse_score(value: Any, scale: float = 10.0) -> float | None:
    """A score on 0..`scale` from ints, floats and strings such as "8", "8.5", "8/10", "80%".

    Anything else ("eight", "", NaN, a value off the scale) is no score: None, never an error.
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
        number = float(match.group(1))
        if match.group(2):
            denominator = float(match.group(3))
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
