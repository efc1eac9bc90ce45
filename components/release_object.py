"""One release object on a spoke: a raw Kubernetes resource of the pulumi-kubernetes
provider, registered by its type token with the object as its inputs."""

import pulumi


class ReleaseObject(pulumi.CustomResource):
    """The program reads only the identity of a release object from its outputs (the
    anchor's uid for the owner references, a wave gate's digest of uids and resource
    versions), so the SDK keeps only those fields of `metadata` (sdk_speedups/kept_outputs.py);
    the stack state keeps every output.

    The class has no annotations on purpose: the SDK reads a resource class's type
    hints again for every resource it resolves, and would translate `metadata` by them.
    """

    kept_outputs = {"metadata": frozenset(
        {"name", "namespace", "uid", "resourceVersion", "generation"})}
