"""L4: measurements per commit in git (the only user of gitpython)."""
