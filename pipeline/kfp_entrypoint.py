"""Forwards to kfp_compiler.entrypoint, for pipeline images compiled before the move.

Specs compiled by earlier versions run `python -m pipeline.kfp_entrypoint`;
an image built from this code must still start them. New specs name
kfp_compiler.entrypoint.
"""
from kfp_compiler.entrypoint import main, with_restored_types  # noqa: F401

if __name__ == "__main__":
    main()
