"""L4: GitHub Actions: workflow commands, environment files and the sticky pull-request comment (stdlib only)."""
