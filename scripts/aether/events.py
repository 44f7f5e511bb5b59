"""The colony's event log (events.json, last 100 kept) and its activity log (activity.log)."""

from __future__ import annotations

from aether import clock, store

MAX_EVENTS = 100


def append(data: dict, event_type: str, source: str, content: str) -> dict:
    """Append an event to loaded events.json data (call inside a store update); returns it."""
    events = data["events"]
    taken = {e.get("id") for e in events}
    event = {
        "id": clock.new_id("evt", taken),
        "type": event_type,
        "source": source,
        "content": content,
        "timestamp": clock.iso(),
    }
    events.append(event)
    del events[:-MAX_EVENTS]
    return event


def add(event_type: str, source: str, content: str) -> dict:
    """event-add: record one event."""
    return store.update("events", lambda data: append(data, event_type, source, content))
