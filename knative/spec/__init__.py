"""The Knative Operator's `spec` keys, as transforms over the rendered release."""
