# SPDX-License-Identifier: BSD-3-Clause
"""Entry point of pytest_pam_wrapper (group pytest11, name pam_wrapper).

pytest registers this module under the entry point's name and then loads
the plugin itself under its module name, pytest_pam_wrapper, which is also
the name that ``-p pytest_pam_wrapper`` and ``pytest_plugins =
["pytest_pam_wrapper"]`` register it under: whichever comes first, the
others find it registered, instead of pytest failing with "Plugin already
registered" as it does when one module is registered under two names.
``-p no:pam_wrapper`` turns the automatic loading off.

PYTEST_DONT_REWRITE
"""

pytest_plugins = ["pytest_pam_wrapper"]
