"""Grading layers (one module each) and the pipeline that runs them in order."""
