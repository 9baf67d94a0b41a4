"""Maps the stage folders (`app/`, `engine/`, `ingest/`, `warehouse/`) into the one `trajscope` namespace.

The project's layout keeps each stage at the repository's top level; installed, each is `trajscope.<stage>`,
so nothing but `trajscope` lands in site-packages. pyproject.toml holds everything else.
"""
from setuptools import find_packages, setup

STAGES = ("app", "engine", "ingest", "warehouse")

packages = find_packages(include=["trajscope", "trajscope.*"])
package_dir = {"trajscope": "trajscope"}
for stage in STAGES:
    package_dir[f"trajscope.{stage}"] = stage
    packages += [f"trajscope.{stage}", *(f"trajscope.{stage}.{sub}" for sub in find_packages(where=stage))]

setup(packages=packages, package_dir=package_dir)
