"""Computer players: their word sense (:mod:`client.bots.brain`) and its data.

The data under ``client/bots/data/`` is built once by `client/bots/databuild/build_data.py` (a
build-time script with its own tools) and committed; playing needs only numpy.
"""
