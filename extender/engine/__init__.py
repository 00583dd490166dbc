"""The scheduling engine: kube-scheduler's framework (PreFilter, Filter, PreScore, Score, NormalizeScore),
a registry of plugins by name, profiles with weights, and the mapping of scores to the extender's 0..10."""
