"""Data shipped with the package: the bundled demo cluster (also reachable as config/demo-cluster.yaml)."""
