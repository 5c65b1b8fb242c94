# SPDX-License-Identifier: BSD-3-Clause
"""The environment the suite gives its tests (cmake/PwrapTesting.cmake).

The .nobody twins run with nobody's own USER, LOGNAME and HOME, whatever the
caller's were: `sudo` sets USER=root, and a twin that kept it would share
root's pytest basetemp ($TMPDIR/pytest-of-root), which pytest refuses to
whichever user did not make it.  scripts/test.sh runs the suite with USER and
LOGNAME set as sudo sets them, so this test sees that case in CI.
"""
import getpass
import os
import pwd


def test_basetemp_and_login_environment_are_the_runners(tmp_path):
    me = pwd.getpwuid(os.geteuid())
    assert os.stat(tmp_path).st_uid == os.geteuid()
    # <basetemp root>/pytest-of-<user>/pytest-<n>/<test>
    assert tmp_path.parent.parent.name == "pytest-of-" + getpass.getuser()
    if os.environ.get("PWRAP_AS_NOBODY"):
        # The twin's own, not the caller's (the main run keeps its caller's).
        assert me.pw_name == "nobody"
        assert os.environ.get("USER") == me.pw_name
        assert os.environ.get("LOGNAME") == me.pw_name
        assert os.environ.get("HOME") == me.pw_dir
