# SPDX-License-Identifier: BSD-3-Clause
"""The explorer from Python: pypamtest.explore() and the pytest fixture's
pam_wrapper.explore().  The plugin is loaded on purpose: it re-runs pytest
with libpam_wrapper.so preloaded, as for a user's project."""
pytest_plugins = ["pytest_pam_wrapper"]
