"""The models of what a fleet entry writes under `serving` and `eventing`: the Knative
Operator's spec keys, one module per key (named after it), validated once when the
stack config is read. The lowest layer: `config/` and `knative/` both import it,
and it imports nothing of theirs."""
