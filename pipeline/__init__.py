"""The training pipeline: its settings, the plan, the TFX DAG and the local runner.

`imagepipe compile` turns the same DAG into a Kubeflow or Vertex package (kfp_compiler/).
"""
