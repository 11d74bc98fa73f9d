"""A KFP v2 backend on this machine, for development and tests: `kubeflow/run_local.py`.

Not installed with imagepipe (setup.py leaves kubeflow/ out): the command and the tests put
kubeflow/ on sys.path, and `kfp_emulator` is the only package there.
"""
