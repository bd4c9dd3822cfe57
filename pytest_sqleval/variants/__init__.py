"""Generated variants of a suite database and their distillation (test-suite evidence)."""
