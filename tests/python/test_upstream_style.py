# SPDX-License-Identifier: BSD-3-Clause
#
# pypamtest used the way upstream pam_wrapper's own Python test suite uses
# it: unittest classes, positional arguments, assertSequenceEqual on the
# results, TestResult built by hand and compared through repr(), and the
# PamTestError text matched with a regular expression.  Everything a suite
# written for upstream checks must hold here unchanged; the one exception is
# repr() of a TestResult with errors, where upstream printed the info list
# in place of the errors and we print the errors.  (Written for this
# project; no upstream code.)
import os
import re
import shutil
import tempfile
import unittest

import pypamtest


class ResultAssertions(unittest.TestCase):
    def check_result(self, res, info, errors):
        self.assertIsNotNone(res)
        self.assertTrue(hasattr(res, "info"))
        self.assertTrue(hasattr(res, "errors"))
        self.assertSequenceEqual(res.info, info)
        self.assertSequenceEqual(res.errors, errors)


class ConstantsAndCases(unittest.TestCase):
    def test_operations_exist(self):
        for name in ("PAMTEST_AUTHENTICATE", "PAMTEST_SETCRED",
                     "PAMTEST_ACCOUNT", "PAMTEST_OPEN_SESSION",
                     "PAMTEST_CLOSE_SESSION", "PAMTEST_CHAUTHTOK",
                     "PAMTEST_GETENVLIST", "PAMTEST_KEEPHANDLE"):
            self.assertTrue(hasattr(pypamtest, name), name)

    def test_case_members(self):
        case = pypamtest.TestCase(pypamtest.PAMTEST_AUTHENTICATE)
        self.assertEqual(case.pam_operation, pypamtest.PAMTEST_AUTHENTICATE)
        self.assertEqual(case.expected_rv, 0)
        self.assertEqual(case.flags, 0)
        case = pypamtest.TestCase(pypamtest.PAMTEST_CHAUTHTOK, 1, 2)
        self.assertEqual((case.pam_operation, case.expected_rv, case.flags),
                         (pypamtest.PAMTEST_CHAUTHTOK, 1, 2))

    def test_case_repr(self):
        case = pypamtest.TestCase(pypamtest.PAMTEST_CHAUTHTOK, 1, 2)
        self.assertEqual(repr(case),
                         "{ pam_operation [5] expected_rv [1] flags [2] }")

    def test_unknown_operation(self):
        self.assertRaises(ValueError, pypamtest.TestCase, 666)


class HandMadeResults(ResultAssertions):
    def setUp(self):
        self.infos = ["info", "list"]
        self.errs = ["error", "list"]

    def test_no_arguments(self):
        self.check_result(pypamtest.TestResult(), [], [])

    def test_both_lists(self):
        res = pypamtest.TestResult(self.infos, self.errs)
        self.check_result(res, self.infos, self.errs)

    def test_repr_of_empty_result(self):
        self.assertEqual(repr(pypamtest.TestResult()),
                         "{ errors: {  } infos: {  } }")

    def test_repr_of_both_lists(self):
        res = pypamtest.TestResult(self.infos, self.errs)
        # Upstream expected "{info}{list}" in the errors part too (its bug).
        self.assertEqual(repr(res),
                         "{ errors: { {error}{list} } infos: { {info}{list} } }")


class RunAgainstMatrix(ResultAssertions):
    """A pam_matrix service in verbose mode, as upstream's suite sets up."""

    @classmethod
    def setUpClass(cls):
        cls.old_dir = os.environ.get("PAM_WRAPPER_SERVICE_DIR")
        cls.dir = tempfile.mkdtemp(prefix="pypamtest-upstream-")
        os.chmod(cls.dir, 0o755)
        passdb = os.path.join(cls.dir, "passdb")
        with open(passdb, "w", encoding="utf-8") as f:
            f.write("trinity:secret:matrix_py\n")
        with open(os.path.join(cls.dir, "matrix_py"), "w",
                  encoding="utf-8") as f:
            f.write("auth required pam_matrix.so passdb=%s verbose\n" % passdb)
        os.environ["PAM_WRAPPER_SERVICE_DIR"] = cls.dir

    @classmethod
    def tearDownClass(cls):
        if cls.old_dir is None:
            os.environ.pop("PAM_WRAPPER_SERVICE_DIR", None)
        else:
            os.environ["PAM_WRAPPER_SERVICE_DIR"] = cls.old_dir
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_authenticate(self):
        case = pypamtest.TestCase(pypamtest.PAMTEST_AUTHENTICATE)
        res = pypamtest.run_pamtest("trinity", "matrix_py", [case],
                                    ["secret"])
        self.check_result(res, ("Authentication succeeded",), ())

    def test_wrong_password_raises(self):
        case = pypamtest.TestCase(pypamtest.PAMTEST_AUTHENTICATE)
        pattern = (r"Error \[2\]: Test case { pam_operation \[0\] "
                   r"expected_rv \[0\] flags \[0\] } returned \[%d\]"
                   % pypamtest.PAM_AUTH_ERR)
        with self.assertRaisesRegex(pypamtest.PamTestError, pattern) as cm:
            pypamtest.run_pamtest("trinity", "matrix_py", [case], ["wrong"])
        # Ours goes on with the code's name.
        self.assertTrue(str(cm.exception).endswith(
            "returned [%d] (PAM_AUTH_ERR)" % pypamtest.PAM_AUTH_ERR),
            str(cm.exception))
        self.assertTrue(re.search(pattern, str(cm.exception)))

    def test_no_answer_left(self):
        # Upstream's conversation answers a prompt it has no answer for
        # with a NULL response, and pam_matrix returns PAM_CRED_ERR for it
        # (9c82650 failed the conversation: PAM_AUTHINFO_UNAVAIL).
        case = pypamtest.TestCase(pypamtest.PAMTEST_AUTHENTICATE,
                                  pypamtest.PAM_CRED_ERR)
        for answers in ([], None):
            res = pypamtest.run_pamtest("trinity", "matrix_py", [case], answers)
            self.assertIsNotNone(res)


if __name__ == "__main__":
    unittest.main()
