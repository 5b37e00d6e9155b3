"""Files that can sway a check without being the check: where its pytest looks and their snapshot."""
