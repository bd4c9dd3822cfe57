"""Variants of a suite database, built by the grader, and their distillation: evidence beyond one snapshot."""
