"""PushedWarmStart: the served version's warm-start weights, read from the push destination."""
