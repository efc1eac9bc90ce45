"""The Pulumi layer: the Spoke component and the program that registers the fleet."""
