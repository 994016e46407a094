"""The engine study's pieces: the seeded data of the Comet-vs-Spark study (``data``), Spark's
``hash`` for engines without it (``murmur3``), and one worker process per engine (``worker``)."""
