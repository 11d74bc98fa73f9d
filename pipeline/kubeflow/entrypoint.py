"""Forwards to kfp_compiler.entrypoint, for packages compiled before the compiler moved.

Specs compiled by earlier versions run `python -m pipeline.kubeflow.entrypoint`; an image
built from this code must still start them. New specs name kfp_compiler.entrypoint.
"""
from kfp_compiler.entrypoint import main, with_restored_types  # noqa: F401

if __name__ == "__main__":
    main()
