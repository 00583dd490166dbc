"""Capacity planning: ``extender plan``, what-if sweeps over the engine's exact ``simulate``.

A consumer of the engine, beside the service: it never changes how a pod is scheduled, it asks
:class:`extender.engine.simulate.Simulator` the same question under many variants of one cluster.

- :mod:`.planfile`: the plan file and its validation (errors name the file and key);
- :mod:`.workload`: Deployments, StatefulSets, Jobs, ReplicaSets and Pods expanded into pods as their
  controllers create them;
- :mod:`.base`: the base cluster (dump, demo or a live cluster read once), shipped once to each worker;
- :mod:`.variants`: node pools added or removed, zones lost, cordons, profile and weight changes,
  applied to a copy of the base cache (or written out as a dump for ``extender simulate``);
- :mod:`.evaluate`: one variant simulated (what a worker does), :mod:`.results` what it comes to;
- :mod:`.search`: the smallest count of a pool that places everything;
- :mod:`.multicluster`: Karmada member clusters and ResourceBindings under variants;
- :mod:`.engines`: where simulations run (this process, a local process pool, Ray, Dask);
- :mod:`.runner`: a whole plan; :mod:`.report`, :mod:`.charts`, :mod:`.html`: the outputs;
  :mod:`.cli`: the ``extender plan`` command.
"""
