"""colony: colony-wide commands, the drivers of `aether next` and the hooks that launch ants and record answers."""
