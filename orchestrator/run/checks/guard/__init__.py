"""The regression guard: footprints, the look-up of affected features, and which checks run now."""
