"""Helpers of bench/load.py: the bare broadcast baseline server, the lean scripted players, /proc readers."""
