"""turbocubes tests (a package so ``tests.partners`` imports from anywhere)."""
