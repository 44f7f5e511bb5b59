"""The guard's rules, one per module (hooks/guard.py applies them)."""
