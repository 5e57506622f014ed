"""Dream cycles: the cycle and its lock, statistics, promotion to auto-write."""
