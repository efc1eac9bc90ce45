"""The real engine with a client-certificate access provider: the program resolves the
spoke through it, and the spoke's pulumi-kubernetes provider, running the same plugin
through client-go, plans the install."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from lab.fleet import FleetStack, entry
from lab.handle import Lab
from tests.lab.test_client_cert_credentials import client_cert_profile
from tests.support.fleet import changed_spokes

pytestmark = pytest.mark.e2e


def test_preview_plans_the_spoke_through_a_client_certificate(lab: Lab, tmp_path: Path) -> None:
    with client_cert_profile(lab, tmp_path / "plugin") as profile:
        stack = FleetStack(lab, f"t-cc-{uuid.uuid4().hex[:6]}", tmp_path / "state")
        stack.init()
        try:
            stack.configure([entry("cc", profile=profile.name, eventing=None)],
                            providerFile=str(profile.provider_file))
            res, steps = stack.preview_steps()
        finally:
            stack.remove()
            stack.cleanup()
    assert res.ok, res.why
    assert changed_spokes(steps).get("cc") == {"create"}, res.out
    # Once for the program, then by the provider (client-go), which reached the spoke with it.
    assert (tmp_path / "plugin" / "runs").read_text().count("run") >= 2
    assert "unreachable" not in res.out
    assert "PRIVATE KEY" not in res.out
