"""Verification and integrity: a check run, the check pool, protected files, influence, the regression guard, footprints, final verification, failed work."""
