"""What happens to a spoke a group managed on the last run and no longer selects
(`groups[].whenDeselected`). A module of its own: the fleet membership's dynamic
provider reads it without loading the config models."""

from __future__ import annotations

FAIL = "Fail"
UNINSTALL = "Uninstall"
