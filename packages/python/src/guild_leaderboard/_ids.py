"""Ids as the service takes them: JSON strings of digits, made from what a bot holds.

discord.py gives ids as Python ints (``message.author.id == 1200000000000000001``), past 2**53,
where a JSON number stops being exact for most readers: the service refuses numbers there, so
every id leaves this package as a string. Anything that is not an id is refused here, before a
request is made, with the argument's name in the message.
"""

from __future__ import annotations

import re
from typing import Iterable, List, Union

#: What a caller may pass as an id: an int (discord.py) or a string of digits.
Snowflake = Union[int, str]

_SNOWFLAKE = re.compile(r"[1-9][0-9]{0,19}")
_OP_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")


def _text(name: str, value: object, pattern: "re.Pattern[str]", rule: str) -> str:
    """An int in digits, or a string, that matches ``pattern``; else TypeError or ValueError saying ``rule``."""
    # bool is an int subclass, and a float (even 1.2e18) has already lost an id's low digits.
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"{name} must be an int or a string, not {type(value).__name__}")
    text = str(value) if isinstance(value, int) else value
    if pattern.fullmatch(text) is None:
        raise ValueError(f"{name} must be {rule}, not {value!r}")
    return text


def snowflake(name: str, value: object) -> str:
    """``value`` as the service's id string: 1 to 20 ASCII digits, no leading zero."""
    return _text(name, value, _SNOWFLAKE, "1 to 20 digits with no leading zero (a Discord id)")


def snowflakes(name: str, values: Iterable[object]) -> List[str]:
    """Every id of ``values`` as a string (a list of role ids, say)."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a list of ids, not {type(values).__name__}")
    return [snowflake(f"{name}[{index}]", value) for index, value in enumerate(values)]


def op_id(value: object) -> str:
    """An operation id (a message id, say): 1 to 64 of ``A-Z a-z 0-9 . _ : -``; an int is written in digits."""
    return _text("op_id", value, _OP_ID, "1 to 64 of A-Z a-z 0-9 . _ : - (a message id, say)")
