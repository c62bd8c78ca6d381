"""Java date patterns (`yyyy-MM-dd HH:mm:ss`), as APOC's date functions read and write them.

Public import scripts parse their CSV dates with `apoc.date.parse(text, 'ms', 'MM/dd/yyyy')` and
format them with `apoc.date.format(...)`. The loader computes those calls for each row in Python
(`nodes.graphdb.row_functions`), so it reads the pattern as Java does: letters repeat for width
(`d` reads `5` and `05`, as Java's parser does; `dd` writes `05`), text between single quotes is
literal (`''` is a quote), and times are UTC unless the text gives an offset. A letter this module
does not know is refused (`None` from `parse_pattern`), never guessed.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

#: (a run of one pattern letter, or literal text): ("y", 4) or ("'", "T")
Token = tuple[str, int | str]

_TOKENS = re.compile(r"'(?:[^']|'')*'|''|([A-Za-z])\1*|[^A-Za-z']+")
#: The letters read: year, month, day, hours (0-23, 1-12), minutes, seconds, milliseconds, AM/PM,
#: weekday, and the zone offset.
_KNOWN = set("yMdHhmsSaEZX")
_STRPTIME = {
    **{"y": "%Y", "d": "%d", "H": "%H", "h": "%I", "m": "%M", "s": "%S"},
    **{"S": "%f", "a": "%p", "Z": "%z", "X": "%z"},
}


def parse_pattern(pattern: str) -> list[Token] | None:
    """The pattern's tokens, or None when it uses a letter this module does not read."""
    tokens: list[Token] = []
    for match in _TOKENS.finditer(pattern):
        text = match.group()
        if text.startswith("'"):
            tokens.append(("'", "'" if text == "''" else text[1:-1].replace("''", "'")))
        elif text[0].isalpha():
            if text[0] not in _KNOWN or (text[0] == "S" and len(text) != 3):
                return None  # S and SS are milliseconds to Java, a fraction of a second to Python
            tokens.append((text[0], len(text)))
        else:
            tokens.append(("'", text))
    return tokens


def _strptime_format(tokens: list[Token]) -> str:
    parts = []
    for letter, width in tokens:
        if letter == "'":
            parts.append(str(width).replace("%", "%%"))
        elif letter == "y":
            parts.append("%y" if width == 2 else "%Y")
        elif letter == "M":
            parts.append("%m" if int(width) <= 2 else "%b" if width == 3 else "%B")
        elif letter == "E":
            parts.append("%a" if int(width) <= 3 else "%A")
        else:
            parts.append(_STRPTIME[letter])
    return "".join(parts)


def parse_date(text: str, tokens: list[Token]) -> datetime:
    """`text` read with the pattern, in UTC unless it gives an offset. Raises ValueError, naming
    the text and what it should look like, when it does not fit."""
    try:
        parsed = datetime.strptime(text.strip(), _strptime_format(tokens))
    except ValueError:
        raise ValueError(f"the date {text!r} does not fit the pattern {pattern_text(tokens)!r}") from None
    if not any(letter == "y" for letter, _ in tokens):
        parsed = parsed.replace(year=1970)  # Java's parser starts from the epoch, Python's from 1900
    elif ("y", 2) in tokens:  # Java puts a two-digit year within 80 years before and 20 after now
        earliest = datetime.now(UTC).year - 80
        year = earliest - earliest % 100 + parsed.year % 100
        parsed = parsed.replace(year=year if year >= earliest else year + 100)
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def format_date(moment: datetime, tokens: list[Token]) -> str:
    """`moment` (UTC) written with the pattern, as Java writes it."""
    parts = []
    for letter, width in tokens:
        if letter == "'":
            parts.append(str(width))
            continue
        size = int(width)
        if letter == "y":
            parts.append(f"{moment.year % 100:02d}" if size == 2 else f"{moment.year:0{size}d}")
        elif letter == "M":
            parts.append(f"{moment.month:0{size}d}" if size <= 2 else moment.strftime("%b" if size == 3 else "%B"))
        elif letter == "E":
            parts.append(moment.strftime("%a" if size <= 3 else "%A"))
        elif letter == "a":
            parts.append(moment.strftime("%p"))
        elif letter == "S":
            parts.append(f"{moment.microsecond // 1000:03d}"[:size].ljust(size, "0"))
        elif letter in "ZX":
            offset = moment.strftime("%z")
            parts.append("Z" if letter == "X" and offset == "+0000" else offset)
        else:
            value = {"d": moment.day, "H": moment.hour, "h": moment.hour % 12 or 12, "m": moment.minute}.get(
                letter, moment.second
            )
            parts.append(f"{value:0{size}d}")
    return "".join(parts)


def pattern_text(tokens: list[Token]) -> str:
    """The pattern written back, for messages."""
    return "".join(
        f"'{width}'" if letter == "'" and str(width).isalpha() else str(width) if letter == "'" else letter * int(width)
        for letter, width in tokens
    )
