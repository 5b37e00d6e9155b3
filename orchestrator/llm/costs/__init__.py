"""What calls cost: the price table and token usage, the run's spend, reservations against the caps."""
