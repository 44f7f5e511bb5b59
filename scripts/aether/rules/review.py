"""The advisory review's rule: reading a reviewer's findings and deciding rebuild or continue
(pure). See docs/decisions/review-and-rebuilds.md.
"""

from __future__ import annotations

from aether.core.exceptions import input_error
from aether.core.text import one_line
from aether.rules import contracts

MAX_WAVE_REBUILDS = 2


SEVERITIES = ("CRITICAL", "HIGH", "MEDIUM", "LOW")


SEVERITY_ALIASES = {
    "CRIT": "CRITICAL",
    "BLOCKER": "CRITICAL",
    "MED": "MEDIUM",
    "MODERATE": "MEDIUM",
    "MINOR": "LOW",
    "INFO": "LOW",
    "MAJOR": "HIGH",
}


MAX_FINDINGS = 200


KEPT_FINDINGS = 50  # findings stored per review round in the spawn tree


SEVERITY_GUIDE = """Severities:
- CRITICAL: the code does not run (syntax error, failing import, crash at launch), a security hole, or a risk of corrupting data
- HIGH: tests fail, a major requirement is missing, or existing behaviour broke
- MEDIUM: code quality, missed edge cases, conventions not followed
- LOW: style, small improvements, documentation gaps"""


def _severity(value, where: str) -> str:
    raw = value.strip().strip("*[]").upper() if isinstance(value, str) else None
    name = SEVERITY_ALIASES.get(raw, raw) if raw is not None else None
    if name not in SEVERITIES:
        raise input_error("invalid_finding", f"{where}.severity is {value!r}; use one of {', '.join(SEVERITIES)}")
    return name


def read_findings(doc) -> tuple:
    """The reviewer's findings, checked: (findings, summary, claimed critical_count)."""

    if isinstance(doc, list):
        doc = {"findings": doc}
    if not isinstance(doc, dict):
        raise input_error("invalid_finding", "the review must be a JSON object with a `findings` array")
    items = doc.get("findings", [])
    if not isinstance(items, list):
        raise input_error("invalid_finding", "`findings` must be an array")
    if len(items) > MAX_FINDINGS:
        raise input_error("too_many_items", f"{len(items)} findings; the limit is {MAX_FINDINGS}")
    findings = []
    for i, item in enumerate(items):
        where = f"findings[{i}]"
        if not isinstance(item, dict):
            raise input_error("invalid_finding", f"{where} must be an object {{severity, description, location, recommendation}}")
        findings.append(
            {
                "severity": _severity(item.get("severity"), where),
                "description": contracts.text_field(item, "description", where, required=True, limit=2000),
                "location": contracts.text_field(item, "location", where, limit=300),
                "recommendation": contracts.text_field(item, "recommendation", where, limit=2000),
            }
        )
    findings.sort(key=lambda f: SEVERITIES.index(f["severity"]))
    claimed = doc.get("critical_count")
    claimed = claimed if isinstance(claimed, int) and not isinstance(claimed, bool) else None
    return findings, one_line(doc.get("summary", ""), 500) if isinstance(doc.get("summary"), str) else "", claimed


def rule(critical: int, rebuilds: int) -> tuple:
    """(action, reason) for a review with `critical` CRITICAL findings after `rebuilds` rebuilds."""
    if critical == 0:
        return "continue", "no CRITICAL findings"
    if rebuilds < MAX_WAVE_REBUILDS:
        return "rebuild", f"{critical} CRITICAL finding(s): rebuild {rebuilds + 1} of {MAX_WAVE_REBUILDS}"
    return "continue", (f"{critical} CRITICAL finding(s) remain after {MAX_WAVE_REBUILDS} rebuilds; the build continues with a warning")


def render(wave: int, round_: int, findings: list, summary: str, action: str, reason: str) -> str:
    lines = [f"REVIEW — wave {wave}, round {round_} (advisory)"]
    for f in findings:
        where = f"  {f['location']}" if f["location"] else ""
        lines.append(f"  {f['severity']:<8}{where}  {f['description']}")
        if f["recommendation"]:
            lines.append(f"  {'':<8}→ {f['recommendation']}")
    if not findings:
        lines.append("  (no findings)")
    if summary:
        lines.append(f"Summary: {summary}")
    lines.append(f"Decision: {action} — {reason}")
    return "\n".join(lines)
