"""L4: rendering of view records (text tables, JSON, HTML and Markdown); no numerics (the use cases compute)."""
