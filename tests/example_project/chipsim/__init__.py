"""chipsim: the example project's own device runtime, standing in for a team's nanobind module.

Nothing here knows simpler: ``ChipWorker`` and ``ChipError`` are what the project already had;
the conftest adapts them to simpler's hooks.
"""

from chipsim.errors import ChipError
from chipsim.scene import MultiChipSceneTestCase, SceneTestCase, scene_test
from chipsim.worker import PLATFORMS, ChipWorker

__all__ = [
    "PLATFORMS",
    "ChipError",
    "ChipWorker",
    "MultiChipSceneTestCase",
    "SceneTestCase",
    "scene_test",
]
