"""L4: rendering of results (text tables, JSON, later HTML and Markdown) and writing output files atomically."""
