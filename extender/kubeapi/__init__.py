"""The Kubernetes API client layer: connection settings (kubeconfig, in-cluster service account) and a
small async client on httpx for what the extender needs: paginated lists, watches with bookmarks,
and creating Bindings.

Why not a client library: lightkube 1.x moved to a second HTTP stack (httpx2) and decodes every object
into typed models, which is what we must avoid for 150k pods; no Python client resumes watches from
bookmarks and relists on 410 the way client-go's reflector does, so that logic is ours anyway
(extender/cluster/reflector.py). Objects stay raw dicts decoded by orjson.
"""
