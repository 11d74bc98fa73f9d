"""`imagepipe compile`: the training and monitoring pipelines for Kubeflow Pipelines and Vertex AI.

The deploy assets (Dockerfile, manifests, submit script, alert rules) are in kubeflow/;
kubeflow/README.md lists every Kubeflow part.
"""
