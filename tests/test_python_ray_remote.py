"""Ray's remote calls run what they name: ``task.remote(...)`` a ``@ray.remote`` function,
``Actor.remote(...)`` makes the actor (its class), also written ``ray.remote(X).options(...).remote()``
or ``ray.remote(num_gpus=1)(X).remote()``, ``handle.method.remote(...)`` the actor's method
when the handle's class is known (llumnix's ``scaler: Scaler = ...; scaler.is_ready.remote()``).
A ``remote`` that the code defines itself is the one called, and a handle of unknown class stays
unresolved."""

from __future__ import annotations

from tests.helpers import edge_set
from tests.native_support import written_bundle

SOURCE = '''
import ray


@ray.remote
def task(x):
    return x


@ray.remote(num_cpus=1)
class Actor:
    def ready(self):
        return True


class Client:
    def remote(self):
        return 1

    def call(self):
        return 2


class Plain:
    def run(self):
        return 3


def drive(handle):
    actor: Actor = Actor.remote()
    ray.remote(Plain).options(num_cpus=1).remote()
    ray.remote(num_gpus=1)(Plain).remote()
    task.options(num_cpus=2).remote(2)
    ray.get(actor.ready.remote())
    ray.get(task.remote(1))
    client = Client()
    client.remote()
    client.call.remote()
    handle.ready.remote()
'''

M = "py:pkg.mod."


def test_ray_remote_calls_run_the_function_method_or_class_they_name(tmp_path):
    calls = edge_set(written_bundle(tmp_path, {"pkg/__init__.py": "", "pkg/mod.py": SOURCE}), "calls")
    assert {target for source, target in calls if source == M + "drive"} == {
        M + "Actor", M + "Actor.ready", M + "task",
        M + "Plain",  # an actor made with ray.remote(Plain) or ray.remote(...)(Plain)
        M + "Client", M + "Client.remote",  # the code's own remote()
        M + "Client.call",  # a method called .remote(): Ray's call of it, as written
    }
