"""Looking at state without changing it: `validate-state` (a report of checks) and `query`
(a JMESPath expression over one state file).

validate-state never raises for a damaged file: an unparsable or invalid file is a failed
check in the report. A missing file fails only for COLONY_STATE; any other reads as its empty
default and is reported with `missing: true`. The checks, in order: `exists`, `json` (UTF-8
JSON, strictly: no NaN, no lone surrogate), `object`, `version` (absent = a v4.4 file; newer than this Aether = fail), `upgrade`,
one check per top-level field of the schema (named after the field), `schema` for problems no
single field explains, and `cap:<array>` for the arrays that have a cap.
"""

from __future__ import annotations

import copy
import json

from aether.core import containment, inputs
from aether.core.exceptions import AetherError, input_error
from aether.state import error_log, events, memory, schemas, store

MAX_QUERY_LENGTH = 4000  # characters of a JMESPath expression (query feeds it to a parser)


def caps() -> dict:
    """file → {array: cap}; the numbers live in the modules that own them."""

    return {
        "errors": {"errors": error_log.MAX_ERRORS},
        "events": {"events": events.MAX_EVENTS},
        "memory": {"phase_learnings": memory.MAX_PHASE_LEARNINGS, "decisions": memory.MAX_DECISIONS},
    }


# A missing file fails validation only if it is one of these; any other reads as its default.
REQUIRED_FILES = ("colony",)

CAP_FIXES = {
    "errors": "the next error recorded keeps the newest",
    "events": "the next event recorded keeps the newest",
    "memory": "`aether memory-compress` keeps the newest",
}


def _spec(name: str) -> schemas.FileSpec:
    spec = schemas.lookup(name)
    if spec is None:
        known = ", ".join(list(schemas.FILES) + ["all"])
        raise input_error("unknown_file", f"unknown state file {name!r}; use one of {known}")
    return spec


def _field_checks(spec: schemas.FileSpec, data: dict) -> list:
    """One check per top-level schema field, plus `schema` for the problems left over."""
    problems = spec.validate(data)
    remaining = list(problems)
    default = spec.default()
    checks = []
    for key in default:
        if key == "version":
            continue
        probe = dict(default)
        probe[key] = data.get(key)
        mine = [p for p in spec.validate(probe) if p in problems]
        for p in mine:
            if p in remaining:
                remaining.remove(p)
        checks.append(_check(key, not mine, "; ".join(mine) if mine else None))
    if remaining:
        checks.append(_check("schema", False, "; ".join(remaining)))
    return checks


def _check(name: str, passed: bool, detail: str | None = None) -> dict:
    item = {"check": name, "pass": bool(passed)}
    if detail:
        item["detail"] = detail
    return item


def validate_file(name: str) -> dict:
    """The report for one state file: {file, path, checks, pass} (+ `backup` when damaged)."""
    spec = _spec(name)
    path = store.path_of(spec)
    report: dict = {"file": spec.filename, "path": path, "checks": []}
    checks = report["checks"]

    def done() -> dict:
        report["pass"] = all(c["pass"] for c in checks)
        if not report["pass"]:
            backup = store.newest_valid_backup(spec, path)
            if backup:
                report["backup"] = backup
                report["hint"] = f"`aether state-restore {spec.name}` brings back {backup}"
        return report

    try:
        containment.check_read(path)
        raw = containment.read_bytes(path)
    except AetherError as exc:  # a file that leads out of the project is not read
        checks.append(_check("exists", False, exc.message))
        return done()
    except FileNotFoundError:
        report["missing"] = True
        if spec.name in REQUIRED_FILES:
            checks.append(_check("exists", False, f"{path} does not exist{spec.missing_hint}"))
        else:
            checks.append(_check("exists", True, "not written yet: it reads as its empty default"))
        return done()
    except OSError as exc:
        checks.append(_check("exists", False, f"{path} cannot be read: {exc.strerror or exc}"))
        return done()
    checks.append(_check("exists", True))

    try:
        data = inputs.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        checks.append(_check("json", False, f"not valid JSON ({exc})"))
        return done()
    checks.append(_check("json", True))

    if not isinstance(data, dict):
        checks.append(_check("object", False, f"expected a JSON object, found {type(data).__name__}"))
        return done()
    checks.append(_check("object", True))

    version = data.get("version")
    if "version" not in data:
        checks.append(
            _check("version", True, f"no version: a v4.4 file, read as schema version {spec.version} and written so on the next change")
        )
    elif isinstance(version, bool) or not isinstance(version, int) or version < 0:
        checks.append(_check("version", False, f"version must be a whole number, found {version!r}"))
        return done()
    elif version > spec.version:
        checks.append(
            _check(
                "version",
                False,
                f"schema version {version} was written by a newer Aether (this one reads up to {spec.version}); upgrade Aether",
            )
        )
        return done()
    else:
        checks.append(_check("version", True))

    try:
        data = spec.upgrade(copy.deepcopy(data))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        checks.append(_check("upgrade", False, f"cannot upgrade from schema version {version!r} ({exc})"))
        return done()
    checks.append(_check("upgrade", True))

    checks.extend(_field_checks(spec, data))

    for array, cap in caps().get(spec.name, {}).items():
        items = data.get(array)
        if isinstance(items, list):
            ok = len(items) <= cap
            detail = None if ok else (f"{len(items)} records, the cap is {cap}: {CAP_FIXES[spec.name]} {cap}")
            checks.append(_check(f"cap:{array}", ok, detail))
    return done()


def validate(target: str) -> dict:
    """validate-state TARGET: one file's report, or `all`: {pass, files:[report…]}."""
    target = target.strip()
    if target == "all":
        files = [validate_file(name) for name in schemas.PROJECT_FILES]
        return {"pass": all(f["pass"] for f in files), "files": files}
    return validate_file(target)


def _say(exc: Exception) -> str:
    """An exception's message on one line, clipped (a parse error may quote the whole query)."""
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:299] + "…"


def query(expression: str, name: str = "colony"):
    """query: the value of a JMESPath expression over one state file (read-only).

    The expression is at most MAX_QUERY_LENGTH characters; one the parser cannot take (a
    number too long to convert, nesting too deep) is `invalid_query` like any syntax error."""
    spec = _spec(name)
    if not expression.strip():
        raise input_error("invalid_query", "the query is empty; e.g. `aether query state`")
    inputs.check_size(expression, MAX_QUERY_LENGTH, "the query")
    import jmespath  # noqa: PLC0415 — start-up: jmespath (~10 ms) only for `query`
    from jmespath import exceptions  # noqa: PLC0415 — start-up: jmespath (~10 ms) only for `query`

    try:
        compiled = jmespath.compile(expression)
    except exceptions.JMESPathError as exc:
        raise input_error("invalid_query", f"invalid JMESPath expression: {_say(exc)}") from None
    except (ValueError, RecursionError) as exc:
        why = "it nests too deeply" if isinstance(exc, RecursionError) else _say(exc)
        raise input_error("invalid_query", f"invalid JMESPath expression: {why}") from None
    data = store.read(spec.name)
    try:
        result = compiled.search(data)
        json.dumps(result, allow_nan=False)  # to_number('nan') and the like: not JSON
        return result
    except exceptions.JMESPathError as exc:
        raise input_error("invalid_query", f"the query failed on {spec.filename}: {_say(exc)}") from None
    except (ValueError, RecursionError, OverflowError) as exc:
        why = (
            "it nests too deeply"
            if isinstance(exc, RecursionError)
            else "its value holds NaN or an infinite number, which JSON cannot hold"
            if "JSON compliant" in str(exc)
            else _say(exc)
        )
        raise input_error("invalid_query", f"the query failed on {spec.filename}: {why}") from None
