# SPDX-License-Identifier: BSD-3-Clause
#
# Type stub of the pypamtest extension module (src/python/pypamtest.c):
# installed next to pypamtest.so so type checkers and IDEs see its API.
import os
from typing import Any, Final, Iterable, final

@final
class _PamHandle:
    """Stub-only name: at run time a PyCapsule named "pypamtest.pam_handle"
    that ends its PAM handle when collected unless run_pamtest took it."""

class PamTestError(OSError):
    """A test case returned other than its expected_rv (args: one message,
    "Error [2]: Test case { ... } returned [7] (PAM_AUTH_ERR)"), or the
    transaction could not run (args: code, text), for instance because
    PAM_WRAPPER=1 is set but libpam_wrapper.so is not in LD_PRELOAD.
    With run_pamtest(..., trace=True) it has the run's records as
    .trace."""
    trace: list[dict[str, Any]]

@final
class TestCase:
    def __new__(cls, pam_operation: int, expected_rv: int = ..., flags: int = ...) -> TestCase: ...
    @property
    def pam_operation(self) -> int: ...
    @property
    def expected_rv(self) -> int: ...
    @property
    def flags(self) -> int: ...
    @property
    def pam_env(self) -> dict[str, str]:
        """Set by a PAMTEST_GETENVLIST run; AttributeError before."""
    @property
    def pam_handle(self) -> _PamHandle:
        """Set by a PAMTEST_KEEPHANDLE run; AttributeError before."""

@final
class TestResult:
    def __new__(cls, info_list: Iterable[str] | None = ...,
                error_list: Iterable[str] | None = ..., /) -> TestResult: ...
    @property
    def info(self) -> tuple[str, ...]: ...
    @property
    def errors(self) -> tuple[str, ...]: ...
    @property
    def trace(self) -> list[dict[str, Any]] | None:
        """run_pamtest(..., trace=True): the module trace's records."""

def run_pamtest(
    username: str | None,
    service: str,
    tests: Iterable[TestCase],
    echo_off: Iterable[str] | None = ...,
    echo_on: Iterable[str] | None = ...,
    handle: _PamHandle | None = ...,
    *,
    conv_fail_at: int | None = ...,
    conv_fail_code: int | None = ...,
    conv_null_resp_at: int | None = ...,
    conv_null_entry_at: int | None = ...,
    conv_long_answer: bool = ...,
    conv_long_answer_at: int | None = ...,
    conv_long_answer_len: int | None = ...,
    trace: bool = ...,
) -> TestResult:
    """Conversation calls are numbered from 1 across the run; a conv_*_at
    of 0 or None never applies, PAMTEST_CONV_EVERY_CALL applies to every
    call.  conv_fail_at: that call returns conv_fail_code (default
    PAM_CONV_ERR); conv_null_resp_at: PAM_SUCCESS with no response array;
    conv_null_entry_at: PAM_SUCCESS with NULL answers; conv_long_answer
    (every call) or conv_long_answer_at: prompts answered with
    conv_long_answer_len characters "abcd...zabc..." (default
    PAMTEST_CONV_LONG_ANSWER_LEN).  trace=True: the wrapper's module
    trace of the run (PAM_WRAPPER_TRACE) as the result's .trace (and the
    PamTestError's), one dict per record."""

def read_trace(path: str | bytes | os.PathLike[str]) -> list[dict[str, Any]]:
    """The records of a module trace file in json format (one dict per
    line; doc/trace-format.md)."""

def explore(
    service: str,
    type: str = ...,
    service_dir: str | None = ...,
    system: bool = ...,
    outcomes: str | Iterable[str] | None = ...,
    model: dict[str, str | Iterable[str]] | Iterable[str] | None = ...,
    must: str | Iterable[str] | None = ...,
    replay: bool = ...,
    replay_all: bool = ...,
) -> Any:
    """The decision table of a PAM stack, checked on libpam: `pamtest
    explore -f json` (pamtest-explore(1)).  A dict with "service", "type",
    "table", "paths" and "findings" for one type ("auth", "account",
    "password", "session"), a list of four for "all" (the default).
    service_dir defaults to $PAM_WRAPPER_SERVICE_DIR; system=True reads
    /etc/pam.d.  Raises RuntimeError when the explorer fails."""

def tool_path(name: str) -> str:
    """The path of pam_wrapper's command name ("pamtest" or "pam_wrapper")
    that belongs to this pypamtest ($PAM_WRAPPER_PAMTEST or
    $PAM_WRAPPER_LAUNCHER when set; else the build tree's or the installed
    one; else the bare name)."""

PAMTEST_AUTHENTICATE: Final[int]
PAMTEST_SETCRED: Final[int]
PAMTEST_ACCOUNT: Final[int]
PAMTEST_OPEN_SESSION: Final[int]
PAMTEST_CLOSE_SESSION: Final[int]
PAMTEST_CHAUTHTOK: Final[int]
PAMTEST_GETENVLIST: Final[int]
PAMTEST_KEEPHANDLE: Final[int]

PAMTEST_FLAG_ESTABLISH_CRED: Final[int]
PAMTEST_FLAG_DELETE_CRED: Final[int]
PAMTEST_FLAG_REINITIALIZE_CRED: Final[int]
PAMTEST_FLAG_REFRESH_CRED: Final[int]

PAMTEST_ERR_OK: Final[int]
PAMTEST_ERR_START: Final[int]
PAMTEST_ERR_CASE: Final[int]
PAMTEST_ERR_OP: Final[int]
PAMTEST_ERR_END: Final[int]
PAMTEST_ERR_KEEPHANDLE: Final[int]
PAMTEST_ERR_INTERNAL: Final[int]

PAMTEST_CONV_EVERY_CALL: Final[int]
PAMTEST_CONV_LONG_ANSWER_LEN: Final[int]

PAM_SUCCESS: Final[int]
PAM_OPEN_ERR: Final[int]
PAM_SYMBOL_ERR: Final[int]
PAM_SERVICE_ERR: Final[int]
PAM_SYSTEM_ERR: Final[int]
PAM_BUF_ERR: Final[int]
PAM_PERM_DENIED: Final[int]
PAM_AUTH_ERR: Final[int]
PAM_CRED_INSUFFICIENT: Final[int]
PAM_AUTHINFO_UNAVAIL: Final[int]
PAM_USER_UNKNOWN: Final[int]
PAM_MAXTRIES: Final[int]
PAM_NEW_AUTHTOK_REQD: Final[int]
PAM_ACCT_EXPIRED: Final[int]
PAM_SESSION_ERR: Final[int]
PAM_CRED_UNAVAIL: Final[int]
PAM_CRED_EXPIRED: Final[int]
PAM_CRED_ERR: Final[int]
PAM_NO_MODULE_DATA: Final[int]
PAM_CONV_ERR: Final[int]
PAM_AUTHTOK_ERR: Final[int]
PAM_AUTHTOK_RECOVERY_ERR: Final[int]
PAM_AUTHTOK_LOCK_BUSY: Final[int]
PAM_AUTHTOK_DISABLE_AGING: Final[int]
PAM_TRY_AGAIN: Final[int]
PAM_IGNORE: Final[int]
PAM_ABORT: Final[int]
PAM_AUTHTOK_EXPIRED: Final[int]
PAM_MODULE_UNKNOWN: Final[int]
PAM_BAD_ITEM: Final[int]
PAM_CONV_AGAIN: Final[int]
PAM_INCOMPLETE: Final[int]

PAM_SILENT: Final[int]
PAM_DISALLOW_NULL_AUTHTOK: Final[int]
PAM_ESTABLISH_CRED: Final[int]
PAM_DELETE_CRED: Final[int]
PAM_REINITIALIZE_CRED: Final[int]
PAM_REFRESH_CRED: Final[int]
PAM_CHANGE_EXPIRED_AUTHTOK: Final[int]
