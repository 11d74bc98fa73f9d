"""imagepipe's bottom layer: storage, the data contract, typed parameters, limits, the TFX adapter.

Generic code every stage and product may import; it imports nothing of imagepipe's own.
"""
