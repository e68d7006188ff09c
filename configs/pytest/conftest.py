# conftest.py — makes pytest put this folder on sys.path (its "rootdir-less" conftest rule), so the
# tests import emit.py, the stand-in candidate, wherever pytest is started from.
