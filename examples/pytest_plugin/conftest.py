# SPDX-License-Identifier: BSD-3-Clause
# Loads pam_wrapper's pytest plugin on purpose: with it, a plain `pytest`
# (no LD_PRELOAD) re-runs itself once under libpam_wrapper.so, before any
# output.  (An installed plugin is also found through its entry point.)
pytest_plugins = ["pytest_pam_wrapper"]
