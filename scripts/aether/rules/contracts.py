"""Reading what workers answer: the JSON result block, its text and list fields, claimed paths,
castes, and the SPAWN REQUEST blocks (pure: the answer text is passed in). The shapes are in
docs/contracts.md.
"""

from __future__ import annotations

import re

from aether.core import inputs
from aether.core.castes import CASTES
from aether.core.exceptions import input_error
from aether.core.text import clip

MAX_REQUEST_BLOCKS = 10  # blocks read from one answer; the rest are only counted


MAX_TEXT = 4000  # a stored summary, reason, context or error (longer text is clipped)


MAX_FILES = 500  # files a worker may claim in one result


MAX_PATH = 1000  # characters in one claimed path


_STATUS_WORDS = {
    "completed": "completed",
    "complete": "completed",
    "success": "completed",
    "succeeded": "completed",
    "done": "completed",
    "ok": "completed",
    "pass": "completed",
    "passed": "completed",
    "failed": "failed",
    "failure": "failed",
    "fail": "failed",
    "error": "failed",
    "blocked": "failed",
}


def text_field(obj: dict, key: str, what: str, *, required: bool = False, limit: int = MAX_TEXT) -> str:
    value = obj.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise input_error("invalid_report", f"{what}: `{key}` is missing or empty")
        return ""
    if isinstance(value, (dict, list, bool)):
        raise input_error("invalid_report", f"{what}: `{key}` must be text, found {type(value).__name__}")
    return clip(value if isinstance(value, str) else str(value), limit)


def str_list(value, what: str, limit: int = MAX_FILES) -> list:
    """A list of non-empty paths (a single string counts as a list of one); a path holding a
    NUL character (no filesystem takes one) is `invalid_report`."""

    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise input_error("invalid_report", f"{what} must be an array of strings, found {type(value).__name__}")
    if len(value) > limit:
        raise input_error("too_many_items", f"{what} lists {len(value)} items; the limit is {limit}")
    out = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, (str, int, float)):
            raise input_error("invalid_report", f"{what} must hold strings, found {type(item).__name__}")
        text = str(item).strip()
        if text:
            inputs.check_path(text, what, "invalid_report")
        if text and text not in out:
            out.append(clip(text, MAX_PATH))
    return out


def norm_path(path: str) -> str:
    """`./src//a.py` → `src/a.py` (the form files are compared in)."""
    path = path.strip().replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    parts = [p for p in path.split("/") if p not in ("", ".")]
    return ("/" if path.startswith("/") else "") + "/".join(parts)


def normalize_caste(raw) -> str | None:
    """`Scout`, `ant:scout`, `scout-ant`, `**route setter**` → the caste name, else None."""
    if not isinstance(raw, str):
        return None
    name = raw.strip().strip("*_`'\"").strip().lower()
    if name.startswith("ant:"):
        name = name[4:]
    name = name.replace("_", "-").replace(" ", "-")
    for suffix in ("-ant", "-worker"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    if name == "routesetter":
        name = "route-setter"
    return name if name in CASTES else None


def extract_json(text: str, what: str):
    """Parse a JSON document, or the last ```json fenced block of a model's answer that
    parses. Strict (see `aether.core.inputs`): a document or block holding NaN, Infinity or a lone
    surrogate is `invalid_json` (an older block is never used instead)."""

    def refused(exc):
        return input_error("invalid_json", f"{what} is not valid JSON: {exc}")

    try:
        return inputs.loads(text.strip())
    except inputs.JSONRefused as exc:
        raise refused(exc) from None
    except ValueError as first:
        error = first
    for block in reversed(re.findall(r"```[ \t]*+(?:json|JSON)?[ \t]*+\r?\n(.*?)```", text, re.S)):
        try:
            return inputs.loads(block)
        except inputs.JSONRefused as exc:
            raise refused(exc) from None
        except ValueError:
            continue
    raise input_error("invalid_json", f"{what} is not valid JSON and holds no ```json block: {error}")


# The lines of a SPAWN REQUEST block (compiled where used: re caches them, and importing stays cheap).
_REQUEST_HEADER = r"^[\s#>*_=~\-—–:|`\[\]]*spawn[\s_-]*request[\s#>*_=~\-—–:|`\[\]]*$"
_REQUEST_FOOTER = r"^[\s#>*_=~\-—–:|`\[\]/]*end[\s_-]*(?:of[\s_-]*)?spawn[\s_-]*request[\s#>*_=~\-—–:|`\[\]]*$"
_REQUEST_KEY = (
    r"^[\s>*\-+]*(?:\*\*|__|`)?\s*(caste|reason|context|blocking)\s*(?:\*\*|__|`)?"
    r"\s*[:=]\s*(?:\*\*|__)?\s*(.*)$"
)
_FENCE = r"^\s*(```|~~~)"


def parse_requests(text: str) -> list:
    """Every SPAWN REQUEST block in a worker's output, as written (not yet validated).

    Tolerates what models produce: markdown fences and bold, headings, `key = value`, CRLF,
    any case, extra spaces, values continued on the next lines (up to a blank line), and a
    missing END line (the block then ends at prose after its fields, the next block or the
    end of the text)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return [block for block in map(_clean_request, _request_blocks(lines)) if block]


def _request_blocks(lines: list) -> list:
    """The blocks' fields as {key: raw value}, each block from its header to its END line (or where it stops)."""
    blocks: list[dict] = []
    current: dict | None = None
    key = None
    for raw in lines:
        line = raw.rstrip()
        ends, starts = re.match(_REQUEST_FOOTER, line, re.I), re.match(_REQUEST_HEADER, line, re.I)
        if ends or starts:
            if current is not None:
                blocks.append(current)
            current, key = ({} if starts and not ends else None), None
            continue
        if current is None:
            continue
        key, over = _request_line(current, key, line)
        if over:
            blocks.append(current)
            current = None
    if current is not None:
        blocks.append(current)
    return blocks


def _request_line(current: dict, key: str | None, line: str) -> tuple:
    """Read one line inside a block into `current`; returns (the key a next line continues, whether the block is over)."""
    if re.match(_FENCE, line):
        return None, False
    match = re.match(_REQUEST_KEY, line, re.I)
    if match:
        key = match.group(1).lower()
        current[key] = match.group(2).strip()
        return key, False
    if not line.strip():
        return None, False  # a value runs on until a blank line
    if key is not None:
        current[key] = (current[key] + "\n" + line.strip()).strip()
        return key, False
    return None, bool(current)  # prose after the fields: the END line is missing, the block is over


def _clean_request(block: dict) -> dict:
    """A block's values without the backticks and bold markers around them."""
    for k in block:
        block[k] = block[k].strip().strip("`").strip()
        if block[k].endswith("**") or block[k].startswith("**"):
            block[k] = block[k].strip("*").strip()
    return block


RESULT_BLOCK = (
    '{"passed": true, "score": 90, "summary": "one line",\n "checks": [{"name": "tests", "passed": true, "detail": "12 passed"}]}'
)


# With a code loop (the first verification and every re-verification after a refinement): the
# watcher report (build-finish takes it) plus the parts loop-score scores and what still fails
# (kept as the iteration's findings for the refinement briefs and loop-present).
SCORED_RESULT_BLOCK = (
    '{"passed": true, "score": 90, "summary": "one line",\n'
    ' "checks": [{"name": "tests", "passed": true, "detail": "12 passed"}],\n'
    ' "score_parts": {"tests": {"passed": 12, "failed": 0}, "types": {"errors": 0}, '
    '"lint": {"errors": 0},\n'
    '                 "coverage": 84.5, "plan_alignment": 0.9, "spec_alignment": null},\n'
    ' "findings": ["src/app.py:12 what still fails"]}'
)


RESULT_CONTRACT = """--- RESULT ---
End your answer with this block (the Queen records it; say only what is true — claimed files are checked):
```json
{"status": "completed", "summary": "one line", "files_created": [], "files_modified": [], "failure": null}
```
On failure use "status": "failed" and fill "failure":
{"task": "<id>", "error": "<exact error>", "root_cause": "…", "suggested_fix": "…", "confidence": 0-100,
 "fix_scope": "contained" | "other_files", "files": [], "category": "…", "hypotheses": [{"hypothesis": "…", "result": "…"}]}"""


DEBUGGER_CONTRACT = """--- RESULT ---
End your answer with this block:
```json
{"status": "completed", "diagnosis": "…", "fix_applied": true, "files_modified": [],
 "verification": {"status": "pass", "details": "…"}}
```
If you cannot diagnose it: "status": "failed", "diagnosis": "UNDIAGNOSABLE: <your analysis>", "fix_applied": false."""


REVIEWER_CONTRACT = """--- RESULT ---
End your answer with this block:
```json
{"findings": [{"severity": "CRITICAL|HIGH|MEDIUM|LOW", "description": "…", "location": "file:line",
 "recommendation": "…"}], "summary": "one line"}
```"""
