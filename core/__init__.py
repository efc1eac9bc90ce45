"""What every other package builds on."""
