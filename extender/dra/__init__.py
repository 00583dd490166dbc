"""Dynamic Resource Allocation: the structured-parameters allocator and CEL device selectors.

A pure library (no cache, no HTTP) that the DynamicResources plugin calls; it matches
``k8s.io/dynamic-resource-allocation`` v0.36.3 (the default "incubating" allocator and ``cel/``).

INTERFACE
---------
* :mod:`extender.dra.records`: ``slice_record(obj)``, ``claim_record(obj)``, ``device_class_record(obj)``
  and ``claim_spec_record(spec)`` build compact records from ``resource.k8s.io/v1`` JSON dicts once,
  when objects enter the cache; malformed objects raise ``DRAObjectError(message)``.
* :mod:`extender.dra.allocator`: ``allocated_state(claims)`` -> ``AllocatedState`` (devices taken by
  allocated or in-flight claims; ``AllocatedState.add_claim`` adds one more), and
  ``Allocator(features, allocated, classes_by_name, slices, cel_cache).allocate(node_name, node_labels,
  claims, deadline=None)`` -> ``list[AllocationResult]`` (one per claim, same order) or None (no
  solution on that node); raises ``AllocationError`` with upstream's text (``failed_on_node`` and
  ``timed_out`` tell the plugin which status to return). ``DEFAULT_FEATURES`` are v1.36's defaults.
* :mod:`extender.dra.results`: ``AllocationResult`` (``devices``: ``DeviceResult`` per device with
  request, driver, pool, device, admin_access, tolerations, binding conditions, share_id,
  consumed_capacity; ``config``; ``node_selector``) with ``to_api()`` giving ``status.allocation``.
* :mod:`extender.dra.cel`: ``CelCache`` compiles each distinct selector once; keep one per process.
"""
