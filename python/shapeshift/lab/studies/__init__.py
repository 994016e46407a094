"""The lab's studies, in the order ``make lab`` runs them.

Each entry is a module of this package with ``TITLE`` and ``run(ctx) -> StudyResult``.
"""

STUDIES = ["mapjobs", "rowformats", "codecs", "records", "columns", "serializers", "rpc", "engine"]
