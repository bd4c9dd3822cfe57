"""Generated variants of a suite database (test-suite evidence): the constraints they keep and how they are built."""
