"""What runs inside `pulumi up` and `pulumi destroy`: the steps of the program's dynamic
resources, one module per resource.

The rest of the pipeline runs while the program registers its plan; these steps run
later, in the dynamic provider the engine starts, when a resource is created, updated,
checked or deleted (a `pulumi destroy` runs no program at all). They reach the spokes
then, with a credential the exec plugin issues at that moment. Free of Pulumi: the
providers in components/ call them with plain resource properties, and a test runs
them with none.
"""
