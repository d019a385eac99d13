"""A CPU profile derived from its machine description and the measured CPUs' data: the counted and carried halves,
and how well it predicts a CPU it never saw."""
