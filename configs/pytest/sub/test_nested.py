"""A test in a sub-folder: its node id holds the folder."""


def test_nested():
    assert "sub" in __file__
