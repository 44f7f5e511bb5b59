"""What the Bug Bash agents cost: a price table per model, AgentCost records and the limits.

Costs are recorded against the phase the agent worked in; the limits (docs/decisions/bug-bash-gate.md: 0.50 USD
per phase, 2.00 USD in total, `bug_bash.max_phase_cost_usd` / `max_total_cost_usd`) are
checked on every record and before the pipeline moves on. Exceeding one stops the pipeline
(exit 6) until the limit is raised.
"""

from __future__ import annotations

from aether.bugs.exit_codes import BUG_EXIT_COST, BUG_EXIT_INPUT, bug_error

# model → (USD per million input tokens, USD per million output tokens)
PRICES_PER_MILLION = {
    "claude-opus-4-20250514": (15.00, 75.00),
    "claude-opus-4-1-20250805": (15.00, 75.00),
    "claude-sonnet-4-20250514": (3.00, 15.00),
    "claude-sonnet-4-5-20250929": (3.00, 15.00),
    "claude-3-7-sonnet-20250219": (3.00, 15.00),
    "claude-3-5-haiku-20241022": (0.80, 4.00),
    "claude-haiku-4-5-20251001": (1.00, 5.00),
}
# the short names agent files use → the model priced for them
ALIASES = {
    "opus": "claude-opus-4-1-20250805",
    "sonnet": "claude-sonnet-4-5-20250929",
    "haiku": "claude-haiku-4-5-20251001",
}
MAX_TOKENS = 100_000_000  # per record: more is a typo, not a run
MAX_COST_RECORDS = 1000  # per bug
DECIMALS = 6


def price(model: str) -> tuple[str, float, float]:
    """(model, input price, output price) per million tokens; `unknown_model` (exit 1) else."""
    name = ALIASES.get(model.strip().lower(), model.strip())
    if name not in PRICES_PER_MILLION:
        known = ", ".join(sorted(PRICES_PER_MILLION) + sorted(ALIASES))
        raise bug_error("unknown_model", f"no price for model {model!r}; known: {known}", BUG_EXIT_INPUT)
    return (name, *PRICES_PER_MILLION[name])


def agent_cost(agent: str, model: str, input_tokens: int, output_tokens: int, phase: str, now: str) -> dict:
    """An AgentCost record (docs/decisions/bug-bash-gate.md), with the model and the phase it ran in."""
    for what, n in (("input tokens", input_tokens), ("output tokens", output_tokens)):
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= MAX_TOKENS:
            raise bug_error("invalid_argument", f"{what} must be a whole number from 0 to {MAX_TOKENS}, got {n!r}", BUG_EXIT_INPUT)
    name, p_in, p_out = price(model)
    usd = round((input_tokens * p_in + output_tokens * p_out) / 1_000_000, DECIMALS)
    return {
        "agent_name": agent,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cost_usd": usd,
        "timestamp": now,
        "model": name,
        "phase": phase,
    }


def totals(state: dict) -> dict:
    """{total_usd, by_phase: {phase: usd}} (rounded)."""
    by_phase: dict[str, float] = {}
    total = 0.0
    for c in state.get("costs", []):
        usd = float(c.get("cost_usd", 0))
        total += usd
        phase = c.get("phase") or "unknown"
        by_phase[phase] = by_phase.get(phase, 0.0) + usd
    return {"total_usd": round(total, DECIMALS), "by_phase": {k: round(v, DECIMALS) for k, v in by_phase.items()}}


def exceeded(state: dict, cfg: dict) -> str | None:
    """Why the bug's costs are over a limit (None when they are not)."""
    t = totals(state)
    if t["total_usd"] > cfg["max_total_cost_usd"]:
        return f"Total cost ${t['total_usd']:.2f} exceeds limit ${cfg['max_total_cost_usd']:.2f} (bug_bash.max_total_cost_usd)"
    for phase, usd in t["by_phase"].items():
        if usd > cfg["max_phase_cost_usd"]:
            return f"Cost of phase {phase.upper()} ${usd:.2f} exceeds limit ${cfg['max_phase_cost_usd']:.2f} (bug_bash.max_phase_cost_usd)"
    return None


def limit_error(state: dict, why: str):
    return bug_error(
        "cost_limit_exceeded",
        f"{why}; the pipeline of bug {state['bug_id']} is stopped. Raise the limit in "
        f".aether/config.yaml (bug_bash:) to continue, or close the bug",
        BUG_EXIT_COST,
        bug_id=state["bug_id"],
        **totals(state),
    )


def check(state: dict, cfg: dict) -> None:
    """Raise `cost_limit_exceeded` (exit 6) when the bug is over a limit."""
    why = exceeded(state, cfg)
    if why:
        raise limit_error(state, why)
