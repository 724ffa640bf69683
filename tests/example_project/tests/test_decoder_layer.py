"""A decoder layer's stages, ported to the runtime that suits each: the runtime changes from
class to class on one device, and only one runtime fits a device context at a time."""

import numpy as np

from chipsim import SceneTestCase, scene_test

HIDDEN = {"name": "Hidden4k", "platforms": ["chipsim", "a2a3"], "params": {"tokens": 8}}


def hidden_states(tokens):
    return np.random.default_rng(2).standard_normal((tokens, 4096))


@scene_test(level=2, runtime="host_build_graph")
class TestInputNorm(SceneTestCase):
    KERNEL = "rms_norm"
    CASES = [HIDDEN]

    def generate_args(self, params):
        return [hidden_states(params["tokens"])]

    def compute_golden(self, args, params):
        (x,) = args
        return x / np.sqrt((x**2).mean(axis=1, keepdims=True) + 1e-6)


@scene_test(level=2, runtime="aicpu_build_graph")
class TestMlpActivation(SceneTestCase):
    KERNEL = "gelu"
    CASES = [HIDDEN]

    def generate_args(self, params):
        return [hidden_states(params["tokens"])]

    def compute_golden(self, args, params):
        (x,) = args
        inner = np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)
        return 0.5 * x * (1.0 + np.tanh(inner))


@scene_test(level=2, runtime="host_build_graph")
class TestGate(SceneTestCase):
    KERNEL = "silu"
    CASES = [HIDDEN]

    def generate_args(self, params):
        return [hidden_states(params["tokens"])]

    def compute_golden(self, args, params):
        (x,) = args
        return x * (1.0 / (1.0 + np.exp(-x)))
