"""A test file one folder down: its classname carries the folder."""


class TestDeep:
    def test_deep(self):
        pass


def test_deep_module_level():
    pass
