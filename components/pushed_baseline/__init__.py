"""PushedBaseline: the last blessed model, read from the push destination (Kubeflow target)."""
