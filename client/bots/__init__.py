"""Computer players: their word sense (:mod:`client.bots.brain`) and its data.

The data under ``client/bots/data/`` is built once by :mod:`client.bots.build_data` (a
build-time script with its own tools) and committed; playing needs only numpy.
"""
