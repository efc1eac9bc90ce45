"""spec.source: the model of the operator's SourceConfigs, which GetSourcePath
(pkg/reconciler/knativeeventing/source/source.go) reads: the key decides which source
release files are loaded beside Eventing's (releases.SOURCE_FILES says which files each
source has; knative.component_files which sources a spec enables)."""

from __future__ import annotations

from core.strict import Strict


class SourceOptions(Strict):
    """One optional eventing source. Naming it enables it (as `ingress.kourier` does);
    `enabled: false` keeps an entry without installing it."""

    enabled: bool = True


OPERATOR_ORDER = ("ceph", "github", "gitlab", "kafka", "rabbitmq", "redis")


class EventingSources(Strict):
    """`source`: the operator's SourceConfigs; releases.SOURCE_FILES says what each loads."""

    kafka: SourceOptions | None = None
    rabbitmq: SourceOptions | None = None
    redis: SourceOptions | None = None
    github: SourceOptions | None = None
    gitlab: SourceOptions | None = None
    ceph: SourceOptions | None = None

    def enabled_names(self) -> list[str]:
        """Names of the enabled sources, in the order the operator appends their files
        (GetSourcePath in pkg/reconciler/knativeeventing/source/source.go): where two
        sources ship the same Namespace object, the last one's labels are what the
        install namespace gets, as there."""
        return [name for name in OPERATOR_ORDER
                if (options := getattr(self, name)) is not None and options.enabled]
