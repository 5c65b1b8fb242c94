# SPDX-License-Identifier: BSD-3-Clause
#
# PAM_WRAPPER_RUNTIME_DIR for Python users: os.environ is a snapshot taken
# before any pam_start, so importing pypamtest under the wrapper creates the
# runtime directory and publishes it (pam_hbac's and SSSD's tests read it
# at set-up and write service files into it).
import os

import pypamtest


def test_published_on_import():
    rd = os.environ.get("PAM_WRAPPER_RUNTIME_DIR")
    assert rd, "PAM_WRAPPER_RUNTIME_DIR not in os.environ after import"
    assert os.path.isdir(rd)
    assert os.access(rd, os.W_OK)
    assert os.path.basename(os.path.dirname(rd)).startswith("pam_wrapper.")


def test_service_file_written_into_runtime_dir(svc):
    rd = os.environ["PAM_WRAPPER_RUNTIME_DIR"]
    path = os.path.join(rd, "pyrt")
    auth = [pypamtest.TestCase(pypamtest.PAMTEST_AUTHENTICATE)]
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write("auth required pam_permit.so")  # no trailing newline
        pypamtest.run_pamtest("alice", "pyrt", auth)
        with open(path, "w", encoding="utf-8") as f:
            f.write("auth required pam_deny.so\n")
        try:
            pypamtest.run_pamtest("alice", "pyrt", auth)
        except pypamtest.PamTestError as e:
            assert "returned [%d]" % pypamtest.PAM_AUTH_ERR in str(e)
        else:
            raise AssertionError("the edited runtime-dir file was not used")
    finally:
        os.unlink(path)
