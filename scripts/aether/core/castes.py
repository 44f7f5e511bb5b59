"""The six castes and how strongly each one senses each pheromone type (docs/decisions/modes.md)."""

CASTES = ("colonizer", "route-setter", "builder", "watcher", "scout", "architect")

SIGNAL_TYPES = ("INIT", "FOCUS", "REDIRECT", "FEEDBACK")

# caste → sensitivity to INIT, FOCUS, REDIRECT, FEEDBACK
SENSITIVITY = {
    "colonizer": {"INIT": 1.0, "FOCUS": 0.7, "REDIRECT": 0.3, "FEEDBACK": 0.5},
    "route-setter": {"INIT": 1.0, "FOCUS": 0.5, "REDIRECT": 0.8, "FEEDBACK": 0.7},
    "builder": {"INIT": 0.5, "FOCUS": 0.9, "REDIRECT": 0.9, "FEEDBACK": 0.7},
    "watcher": {"INIT": 0.3, "FOCUS": 0.8, "REDIRECT": 0.5, "FEEDBACK": 0.9},
    "scout": {"INIT": 0.7, "FOCUS": 0.9, "REDIRECT": 0.4, "FEEDBACK": 0.5},
    "architect": {"INIT": 0.2, "FOCUS": 0.4, "REDIRECT": 0.3, "FEEDBACK": 0.6},
}
