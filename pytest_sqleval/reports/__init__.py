"""Reports read case records and nothing else: failure reprs, summaries, terminal output."""
