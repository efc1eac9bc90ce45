"""The fleet stack's configuration: every input the user writes, validated once."""
