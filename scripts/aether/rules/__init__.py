"""rules: the colony's rules as pure functions over loaded data (no I/O) — modes, ladders, waves, loops, caps, the next step."""
