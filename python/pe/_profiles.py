"""Where the bundled profiles are: an installed package registers the installed ones (its
_install_paths.py, written at installation, points at PREFIX/share/pe/profiles), so that
the lookup of docs/api.md ("Bundled profiles are looked up in profiles_directory()") finds
them after $PE_PROFILES_DIR; the package in BUILD/python uses the source tree's."""

import os

from . import _core

profiles_directory = _core.profiles_directory


def register_installed_profiles():
    try:
        from . import _install_paths
    except ImportError:  # not installed: BUILD/python/pe
        return
    here = os.path.dirname(os.path.abspath(__file__))
    profiles = os.path.normpath(os.path.join(here, _install_paths.PROFILES))
    _core.set_installed_profiles_directory(profiles)
