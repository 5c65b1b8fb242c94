# SPDX-License-Identifier: BSD-3-Clause
"""Tests pam_example with pytest and pam_wrapper's pytest plugin.

The plugin (installed with python3-pypamtest or `pip install`) is found by
pytest itself and gives each test a `pam_wrapper` fixture: a service
directory and pam_matrix users of its own, with pytest running under
LD_PRELOAD=libpam_wrapper.so.  PAM_EXAMPLE_MODULE, the module's path,
comes from CMakeLists.txt.
"""
import os

import pypamtest
import pytest

MODULE = os.environ["PAM_EXAMPLE_MODULE"]


@pytest.fixture
def example(pam_wrapper):
    pam_wrapper.add_service("example", [
        "auth    required %s secret=open-sesame" % MODULE,
        "account required %s" % MODULE,
    ])
    return pam_wrapper


def test_right_password(example):
    example.run("example", "alice",
                [pypamtest.PAMTEST_AUTHENTICATE, pypamtest.PAMTEST_ACCOUNT],
                echo_off=["open-sesame"])


@pytest.mark.parametrize("password", ["guess", "open-sesame ", ""])
def test_wrong_password(example, password):
    example.run("example", "alice",
                [pypamtest.TestCase(pypamtest.PAMTEST_AUTHENTICATE,
                                    pypamtest.PAM_AUTH_ERR)],
                echo_off=[password])


def test_without_secret_is_a_service_error(example):
    example.add_service("broken", ["auth required %s" % MODULE])
    example.run("broken", "alice",
                [pypamtest.TestCase(pypamtest.PAMTEST_AUTHENTICATE,
                                    pypamtest.PAM_SERVICE_ERR)])


@pytest.mark.parametrize("matrix_password, expected", [
    ("open-sesame", pypamtest.PAM_SUCCESS),
    ("other", pypamtest.PAM_AUTH_ERR),
])
def test_stacked_after_pam_matrix(example, matrix_password, expected):
    # Your module after pam_matrix (users from the fixture's passdb): one
    # prompt, as pam_get_authtok() takes the password pam_matrix asked for.
    example.add_user("alice", matrix_password, service="stacked")
    example.add_service("stacked", [
        "auth required pam_matrix.so passdb=%s" % example.passdb,
        "auth required %s secret=open-sesame" % MODULE,
    ])
    example.run("stacked", "alice",
                [pypamtest.TestCase(pypamtest.PAMTEST_AUTHENTICATE, expected)],
                echo_off=[matrix_password])
