"""Benchmarks (not tests): generated clusters, timing harnesses and the RESULTS.md report."""
