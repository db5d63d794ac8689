"""`cmake --install` puts a working package pe under PREFIX/lib/python3/dist-packages that
finds the installed profiles, also after the prefix is moved."""

import json
import os
import subprocess
import sys

import pytest

import pe


def test_installed_package_plans_with_the_installed_profiles(tmp_path):
    build = os.environ.get("PE_BUILD_DIR")
    if not build:
        pytest.skip("PE_BUILD_DIR (set by ctest) names the build to install")
    prefix = tmp_path / "prefix"
    subprocess.run([os.environ.get("PE_CMAKE", "cmake"), "--install", build, "--prefix",
                    str(prefix)], check=True, capture_output=True)
    moved = tmp_path / "moved"
    prefix.rename(moved)
    package_dir = moved / "lib" / "python3" / "dist-packages"
    env = {k: v for k, v in os.environ.items() if k != "PE_PROFILES_DIR"}
    env["PYTHONPATH"] = str(package_dir)
    script = ("import json, pe; print(json.dumps([pe.__file__, pe.profiles_directory(), "
              "pe.plan('resnet50', '8,16', 512)]))")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    file, profiles, point = json.loads(done.stdout)
    assert file == str(package_dir / "pe" / "__init__.py")
    assert os.path.realpath(profiles) == os.path.realpath(moved / "share" / "pe" / "profiles")
    assert point == pe.plan("resnet50", "8,16", 512)
