"""Why a spoke could not be resolved, and what the user should do about it.

The reason names are the Knative Operator's `TargetClusterResolved` reasons, so users
who know the operator (and its docs) recognise them in `pulumi up` failures.
"""

from __future__ import annotations

import enum


class Reason(enum.StrEnum):
    """Operator-compatible reason names for a spoke that cannot be resolved."""

    CLUSTER_PROFILE_NOT_FOUND = "ClusterProfileNotFound"
    CLUSTER_PROFILE_NOT_READY = "ClusterProfileNotReady"
    CLUSTER_PROFILE_UNAVAILABLE = "ClusterProfileUnavailable"
    MULTICLUSTER_DISABLED = "MulticlusterDisabled"
    ACCESS_PROVIDER_FAILED = "AccessProviderFailed"
    REMOTE_CLIENT_CREATION_FAILED = "RemoteClientCreationFailed"
    # Not an operator reason: the release files for the entry could not be read.
    MANIFESTS_UNAVAILABLE = "ManifestsUnavailable"
    # Not an operator reason: the entry's spec does not fit the release it names.
    INVALID_SPEC = "InvalidSpec"
    # Not an operator reason: a group managed the spoke on the last run, not on this one.
    SPOKE_DESELECTED = "SpokeDeselected"
    # Not an operator reason: the spoke's identity lacks a right the install needs.
    SPOKE_ACCESS_DENIED = "SpokeAccessDenied"
    # Not an operator reason: another stack's owner record is on the spoke.
    SPOKE_OWNED_BY_ANOTHER_STACK = "SpokeOwnedByAnotherStack"
    # Not an operator reason: the spoke's owner record could not be read.
    SPOKE_OWNER_UNKNOWN = "SpokeOwnerUnknown"
    # Not an operator reason: the Knative Operator still reconciles a CR on the spoke.
    KNATIVE_OPERATOR_ACTIVE = "KnativeOperatorActive"
    # Not an operator reason: an install's anchor is being deleted, and with it what it owns.
    ANCHOR_BEING_DELETED = "AnchorBeingDeleted"


REMEDIATION: dict[Reason, str] = {
    Reason.CLUSTER_PROFILE_NOT_FOUND: (
        "check the fleet entry's clusterProfileRef name and namespace, and confirm where the "
        "ClusterProfile is published on the hub (kubectl get clusterprofiles -A)"
    ),
    Reason.CLUSTER_PROFILE_NOT_READY: (
        "wait for the fleet manager to set ControlPlaneHealthy=True in the ClusterProfile "
        "status, or set it by hand with kubectl patch clusterprofile <name> -n <namespace> "
        "--subresource=status --type=merge"
    ),
    Reason.CLUSTER_PROFILE_UNAVAILABLE: (
        "check that the hub API server is reachable with the hub kubeconfig and context this "
        "stack uses, that the ClusterProfile CRD (multicluster.x-k8s.io/v1alpha1) is "
        "installed, and that this identity may get clusterprofiles in that namespace"
    ),
    Reason.MULTICLUSTER_DISABLED: (
        "point the stack at an access provider file with pulumi config set "
        "knative-fleet:providerFile <path> (the cluster-inventory-api provider file format, "
        "the same JSON as the operator's --clusterprofile-provider-file)"
    ),
    Reason.ACCESS_PROVIDER_FAILED: (
        "make sure status.accessProviders[].name in the ClusterProfile matches a provider with "
        "an execConfig in the knative-fleet:providerFile file, that the plugin binary exists "
        "on the machine running pulumi and is built for its OS and architecture, and that the "
        "Secret the plugin reads exists on the hub (the plugin's stderr is quoted above)"
    ),
    Reason.REMOTE_CLIENT_CREATION_FAILED: (
        "confirm that the spoke API server in the ClusterProfile status is reachable from the "
        "machine running pulumi, that its certificate-authority-data is the spoke's CA, and "
        "that the credential the plugin returns is valid and not expired"
    ),
    Reason.MANIFESTS_UNAVAILABLE: (
        "check knative-fleet:releaseBase and the entry's version: the release files must "
        "exist under <releaseBase>/knative/<component>/releases/download/knative-v<version>/"
    ),
    Reason.INVALID_SPEC: (
        "fix the entry's serving/eventing section in the stack config as the message says"
    ),
    Reason.SPOKE_DESELECTED: (
        "to keep Knative on the spoke, make a group select its ClusterProfile again (restore "
        "its labels, the group or the profile) or give it an explicit fleet entry; to "
        "uninstall it, set whenDeselected: Uninstall on the group that selected it (put the "
        "group back with that setting if you removed it) and run again"
    ),
    Reason.SPOKE_ACCESS_DENIED: (
        "add the rule the message names to the ClusterRole bound to the spoke's identity; "
        "`python -m operations rights --stack <stack>` prints the whole role this stack needs, "
        "with its binding (README 'Using it on your own fleet')"
    ),
    Reason.SPOKE_OWNED_BY_ANOTHER_STACK: (
        "a spoke has one owner. To move it to this stack, hand it over from the stack the "
        "message names: `python -m operations hand-over --spoke <spoke> --from-stack <owner> "
        "--to-stack <this stack>` (README 'Moving a spoke between stacks'), then move it "
        "in the stacks' config; otherwise take the spoke out of this stack's selection"
    ),
    Reason.SPOKE_OWNER_UNKNOWN: (
        "whose install the spoke holds could not be read (an API error other than NotFound, "
        "a timeout): nothing was written or deleted there. Run again once the spoke's API "
        "server answers; for a spoke that is gone for good, drop it from the stack's state "
        "(docs/troubleshooting.md, 'A spoke that is gone for good')"
    ),
    Reason.KNATIVE_OPERATOR_ACTIVE: (
        "the Knative Operator manages Knative on this spoke; take it over as README "
        "'Taking over a spoke the Knative Operator runs' says (stop the operator, release "
        "each CR the message names without its uninstall), then run again"
    ),
    Reason.ANCHOR_BEING_DELETED: (
        "wait until the anchor is gone: the garbage collector deletes every object it owns "
        "first (kubectl get configmap <name> -n <namespace> answers NotFound; its "
        "metadata.finalizers say what it still waits for), then run `pulumi up --refresh` "
        "(make drift-repair), which restores the whole install with a new anchor"
    ),
}
