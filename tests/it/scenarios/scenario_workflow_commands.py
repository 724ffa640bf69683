"""An L2 test that prints workflow commands: under GitHub Actions they must stay text."""


def test_prints_commands_and_fails(worker):
    worker.run("noop")
    print("::error title=forged::from-a-test")
    print("::add-mask::from-a-test-secret")
    raise AssertionError("printed workflow commands")
