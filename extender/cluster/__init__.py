"""Cluster state: compact records built once per object, per-node aggregates, the cache and its snapshots."""
