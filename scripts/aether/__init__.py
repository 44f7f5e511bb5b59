"""Aether's helper: every deterministic operation of the colony, behind one CLI (`aether`)."""

__version__ = "0.1.0"
