"""The checks every state file's schema is written with (state/schemas.py, state/schema_colony.py,
bugs/storage.py): a field of the right type (and value), an array of objects, defaults filled in."""

from __future__ import annotations

import copy
import math

NUM = (int, float)


def is_a(value, types) -> bool:
    """Is `value` of `types` (a bool is no int; NaN and ±Infinity are no numbers)?"""
    if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
        return False
    if isinstance(value, float) and not math.isfinite(value):
        return False  # NaN and ±Infinity are no numbers for Aether (and not JSON)
    return isinstance(value, types)


def _type_name(types) -> str:
    types = types if isinstance(types, tuple) else (types,)
    names = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array", dict: "object", type(None): "null"}
    return " or ".join(dict.fromkeys(names.get(t, t.__name__) for t in types))


def field_check(problems: list, obj: dict, key: str, types, where: str, required: bool = True, choices=None) -> None:
    """Append a problem when obj[key] is missing (if required), of the wrong type, or not in choices."""
    if key not in obj:
        if required:
            problems.append(f"{where}.{key} is missing")
        return
    value = obj[key]
    if not is_a(value, types):
        found = repr(value) if isinstance(value, float) else type(value).__name__
        problems.append(f"{where}.{key} must be {_type_name(types)}, found {found}")
    elif choices is not None and value not in choices:
        problems.append(f"{where}.{key} is {value!r}, expected one of {', '.join(map(str, choices))}")


def records(problems: list, data: dict, key: str, check, where: str = "") -> None:
    """Check data[key] is an array of objects and run check(problems, item, path) on each."""
    items = data.get(key)
    if not isinstance(items, list):
        problems.append(f"{where}{key} must be an array")
        return
    for i, item in enumerate(items):
        path = f"{where}{key}[{i}]"
        if not isinstance(item, dict):
            problems.append(f"{path} must be an object")
        elif check is not None:
            check(problems, item, path)


def fill(data: dict, defaults: dict) -> dict:
    """Add missing top-level keys (the original Aether's files lack the newer ones); keep everything else."""

    for key, value in defaults.items():
        if key not in data:
            data[key] = copy.deepcopy(value)
    return data


def strings(value) -> bool:
    """Is `value` an array of strings only?"""
    return type(value) is list and all(type(v) is str for v in value)
