"""Forwarders only: pipelines compiled before the compiler moved to kfp_compiler/ run
`python -m pipeline.kubeflow.entrypoint`, so that dotted path must keep starting them."""
