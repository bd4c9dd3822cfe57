"""The package version, in a module of its own so that any part can read it without importing the package facade."""
__version__ = "0.1.0"
