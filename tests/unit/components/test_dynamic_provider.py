"""The dynamic resources register with the types core.resource_types names (the review
and hand-over find them by these), and their providers diff by their kind's keys."""

from __future__ import annotations

import pytest

from components import (
    aggregated_role_guard,
    approval_gate,
    crds_first,
    held_objects,
    membership,
    owner_guard,
    wave_gate,
    webhooks_first,
)
from core import resource_types as types

RESOURCES = [
    (membership.FleetMembership, membership._Provider, types.MEMBERSHIP),
    (wave_gate.WaveGate, wave_gate._Provider, types.WAVE_GATE),
    (approval_gate.ApprovalGate, approval_gate._Provider, types.APPROVAL_GATE),
    (aggregated_role_guard.AggregatedRoleGuard, aggregated_role_guard._Provider,
     types.AGGREGATED_ROLE_GUARD),
    (aggregated_role_guard.AggregatedRoleSweep, aggregated_role_guard._Provider,
     types.AGGREGATED_ROLE_SWEEP),
    (owner_guard.SpokeOwnerGuard, owner_guard._Provider, types.SPOKE_OWNER_GUARD),
    (webhooks_first.WebhookConfigurationsFirst, webhooks_first._Provider, types.WEBHOOKS_FIRST),
    (crds_first.CustomResourceDefinitionsFirst, crds_first._Provider, types.CRDS_FIRST),
    (held_objects.ClusterRbac, held_objects._ClusterRbacProvider, types.CLUSTER_RBAC),
    (held_objects.NamespacedObjects, held_objects._NamespacedProvider,
     types.NAMESPACED_OBJECTS),
]


@pytest.mark.parametrize(("resource", "provider", "kind"), RESOURCES,
                         ids=[kind.name for _, _, kind in RESOURCES])
def test_each_resource_registers_as_its_kind(resource, provider, kind) -> None:
    assert f"pulumi-python:{resource._resource_type_name}" == kind.type
    assert provider.kind.diff_keys == kind.diff_keys


def test_every_kind_has_its_resource() -> None:
    assert {kind for _, _, kind in RESOURCES} == set(types.DYNAMIC_KINDS)
