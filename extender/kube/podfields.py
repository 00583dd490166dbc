"""Which fields of a Pod the scheduler reads: everything else is dropped when a pod enters the cache.

One list, used both to trim decoded pods (extender.cluster.records.slim_pod) and to decode pods from the
apiserver straight into these fields (extender.kubeapi.podcodec). The differential oracle loads existing
pods through the cache, so a field a plugin needs but this list lacks shows up as a mismatch there.
"""

from __future__ import annotations

KEPT_METADATA = ("name", "namespace", "uid", "labels", "ownerReferences", "deletionTimestamp", "resourceVersion",
                 "creationTimestamp")
KEPT_SPEC = ("nodeName", "affinity", "priority", "priorityClassName", "preemptionPolicy", "schedulerName",
             "tolerations", "topologySpreadConstraints", "nodeSelector", "overhead", "resources", "hostNetwork",
             "volumes", "resourceClaims", "hostUsers")
KEPT_CONTAINER = ("name", "image", "resources", "ports", "restartPolicy", "restartPolicyRules")
KEPT_STATUS = ("phase", "startTime", "conditions", "resourceClaimStatuses", "extendedResourceClaimStatus",
               "nominatedNodeName")
KEPT_STATUS_CONTAINER = ("name", "allocatedResources", "resources")
# Volume sources no plugin reads (they never limit placement); PVCs, ephemeral and disk volumes are kept.
UNREAD_VOLUMES = frozenset({"configMap", "secret", "projected", "downwardAPI", "emptyDir"})
# Of the status conditions, only the resize state (in-place resize accounting) and the mark of a pod being
# preempted (preemption waits while a victim on the nominated node terminates) matter.
KEPT_CONDITION_TYPES = frozenset({"PodResizePending", "DisruptionTarget"})
