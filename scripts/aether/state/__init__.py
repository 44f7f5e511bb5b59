"""state: the files and what owns them — schemas, the store (the one writer), checkpoints, spawns, costs, settings."""
